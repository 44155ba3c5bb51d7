import type { ServerDeps } from "../../services.ts";
import type { ToolDef } from "../tool-table.ts";
import { agentJobTools } from "./agent-job-tools.ts";
import { codexTools } from "./codex-tools.ts";
import { delegateBatchTool } from "./delegate-batch.ts";
import { delegateToLocalAgentTool } from "./delegate-to-local-agent.ts";
import { delegateToProviderTool } from "./delegate-to-provider.ts";
import { dshTools } from "./dsh-tools.ts";
import { geminiTools } from "./gemini-tools.ts";
import { listLocalAgentsTool } from "./list-local-agents.ts";
import { localBackendStatusTool } from "./local-backend-status.ts";

/** Every tool dl offers, in the order tools/list names them. */
export function dlTools(deps: ServerDeps): ToolDef[] {
  return [
    delegateToLocalAgentTool(deps),
    delegateBatchTool(deps),
    delegateToProviderTool(deps),
    ...codexTools(deps),
    ...dshTools(deps),
    ...agentJobTools(deps),
    ...geminiTools(deps),
    listLocalAgentsTool(deps),
    localBackendStatusTool(deps),
  ];
}
