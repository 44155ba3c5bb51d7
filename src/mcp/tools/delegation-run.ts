import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Endpoint } from "../../backends/types.ts";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../../dispatch/run-delegation.ts";
import type { ServerDeps } from "../../services.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import { boundResult } from "../result-spill.ts";
import { toolOk } from "../tool-result.ts";
import type { ToolCall } from "../tool-table.ts";
import { type DelegationArgs, normalizeTurns } from "./delegation-schema.ts";

/**
 * One delegation, run in place: what delegate_to_local_agent and delegate_to_provider
 * do when called. Imported on a tool's first call, so a server that lists these tools
 * does not load the agent loop, the HTTP clients and the jail before it must.
 */
export async function runDelegation(
  deps: ServerDeps,
  args: DelegationArgs,
  call: ToolCall,
  endpoint: { endpointFor?: (model: string) => Endpoint; failover?: boolean } = {},
  kind: "delegate_to_local_agent" | "delegate_to_provider" = "delegate_to_local_agent",
): Promise<CallToolResult> {
  const prepared = await prepareDelegation(
    { ...args, max_turns: normalizeTurns(args.max_turns) },
    deps.config,
    deps.settings,
  );
  const result = await runPrepared(
    prepared,
    delegationContext(deps, { ...endpoint, signal: call.signal, onProgress: call.progress, kind }),
  );
  const bounded = await boundResult(result, deps.config.paths.cacheDir);
  await call.progress.settle();
  return toolOk(bounded, renderResult(bounded, TEXT_ANSWER_PREVIEW_CHARS));
}
