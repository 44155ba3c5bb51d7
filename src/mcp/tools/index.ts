import type { ServerDeps } from "../../services.ts";
import type { ToolDef } from "../tool-table.ts";
import { delegateBatchTool } from "./delegate-batch.ts";
import { delegateToLocalAgentTool } from "./delegate-to-local-agent.ts";
import { delegateToProviderTool } from "./delegate-to-provider.ts";
import { jobTools } from "./job-tools.ts";
import { listLocalAgentsTool } from "./list-local-agents.ts";
import { localBackendStatusTool } from "./local-backend-status.ts";

/**
 * Every tool dl offers, in the order tools/list names them: the gateway's delegations,
 * then each provider's job tools (deps.providers, in PROVIDERS order), then the gateway's
 * look-ups.
 */
export function dlTools(deps: ServerDeps): ToolDef[] {
  return [
    delegateToLocalAgentTool(deps),
    delegateBatchTool(deps),
    delegateToProviderTool(deps),
    ...deps.providers.flatMap((m) => jobTools(deps, m)),
    listLocalAgentsTool(deps),
    localBackendStatusTool(deps),
  ];
}
