import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../../dispatch/run-delegation.ts";
import type { ServerDeps } from "../../services.ts";
import { progressReporter } from "../progress.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { delegationFields, delegationResultSchema, normalizeTurns } from "./delegation-schema.ts";

export function registerDelegateToLocalAgent(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "delegate_to_local_agent",
    {
      title: "Delegate to an agent on another model",
      description:
        "Runs a named agent (.claude/agents/<name>.md, 3-tier lookup) on the configured gateway with read_file, write_file and run_bash confined to workdir, and returns its final answer with measured facts: turns, bash_calls, bash_failures, last_bash_exit (checked by dl, not claimed by the model). success=false comes with an error saying what to try. Takes a slot from the model's machine-wide pool; may fail over to an equivalent model (failed_over_from) except for local models.",
      inputSchema: delegationFields,
      outputSchema: delegationResultSchema.shape,
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
          delegationContext(deps, { signal: extra.signal, onProgress: progress }),
        );
        return toolOk(result, renderResult(result));
      }),
  );
}
