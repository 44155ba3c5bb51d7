import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../../dispatch/run-delegation.ts";
import { lazyObject } from "../../lazy-schema.ts";
import type { ServerDeps } from "../../services.ts";
import { progressReporter } from "../progress.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import { boundResult } from "../result-spill.ts";
import { guarded, toolOk } from "../tool-result.ts";
import description from "./delegate-to-local-agent.txt" with { type: "text" };
import { delegationFields, delegationResultSchema, normalizeTurns } from "./delegation-schema.ts";

export function registerDelegateToLocalAgent(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "delegate_to_local_agent",
    {
      title: "Delegate to an agent on another model",
      description: description.trim(),
      inputSchema: lazyObject(delegationFields),
      outputSchema: lazyObject(() => delegationResultSchema.shape),
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    (args, extra) =>
      guarded(async () => {
        const prepared = await prepareDelegation(
          { ...args, max_turns: normalizeTurns(args.max_turns) },
          deps.config,
          deps.settings,
        );
        const progress = progressReporter(extra);
        const result = await runPrepared(
          prepared,
          delegationContext(deps, { signal: extra.signal, onProgress: progress, kind: "delegate_to_local_agent" }),
        );
        const bounded = await boundResult(result, deps.config.paths.cacheDir);
        await progress.settle();
        return toolOk(bounded, renderResult(bounded, TEXT_ANSWER_PREVIEW_CHARS));
      }),
  );
}
