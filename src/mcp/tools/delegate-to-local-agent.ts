import { z } from "zod";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../../dispatch/run-delegation.ts";
import type { ServerDeps } from "../../services.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import { boundResult } from "../result-spill.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./delegate-to-local-agent.txt" with { type: "text" };
import { delegationFields, delegationResultSchema, normalizeTurns } from "./delegation-schema.ts";

export function delegateToLocalAgentTool(deps: ServerDeps): ToolDef {
  return defineTool({
    name: "delegate_to_local_agent",
    title: "Delegate to an agent on another model",
    description: description.trim(),
    input: () => z.object(delegationFields()),
    output: delegationResultSchema,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: "agent",
    // As a task, the same arguments are one background agent job.
    task: { kind: "background", submit: "submit_agent", tasks: (args) => [args] },
    handler: (args, call) =>
      guarded(async () => {
        const prepared = await prepareDelegation(
          { ...args, max_turns: normalizeTurns(args.max_turns) },
          deps.config,
          deps.settings,
        );
        const result = await runPrepared(
          prepared,
          delegationContext(deps, { signal: call.signal, onProgress: call.progress }),
        );
        const bounded = await boundResult(result, deps.config.paths.cacheDir);
        await call.progress.settle();
        return toolOk(bounded, renderResult(bounded, TEXT_ANSWER_PREVIEW_CHARS));
      }),
  });
}
