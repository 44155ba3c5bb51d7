import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { PROVIDERS } from "../jobs/providers/index.ts";
import type { ServerDeps } from "../services.ts";
import { JobTaskStore } from "./job-tasks.ts";
import { noElicitationValidator } from "./no-elicitation.ts";
import { upgradeSubmitTools } from "./task-tools.ts";
import { answerToolsListFromCatalogue } from "./tool-catalogue.ts";
import { registerAgentJobTools } from "./tools/agent-job-tools.ts";
import { registerCodexTools } from "./tools/codex-tools.ts";
import { registerDelegateBatch } from "./tools/delegate-batch.ts";
import { registerDelegateToLocalAgent } from "./tools/delegate-to-local-agent.ts";
import { registerDelegateToProvider } from "./tools/delegate-to-provider.ts";
import { registerDshTools } from "./tools/dsh-tools.ts";
import { registerGeminiTools } from "./tools/gemini-tools.ts";
import { registerListLocalAgents } from "./tools/list-local-agents.ts";
import { registerLocalBackendStatus } from "./tools/local-backend-status.ts";

/** The tools a task-capable client may call as MCP tasks (answered from the job stores). */
const TASK_TOOLS = PROVIDERS.map((p) => `submit_${p.name}`);

/**
 * The MCP server with every tool dl offers. Transport-agnostic: `dl serve` connects it to
 * stdio, tests may connect it to an in-memory pair.
 */
export function createServer(deps: ServerDeps): McpServer {
  const tasks = new JobTaskStore(deps);
  const server = new McpServer(
    { name: "delegate-local", title: "dl — delegate to other backends", version: deps.version },
    {
      capabilities: {
        tools: {},
        logging: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: tasks,
      jsonSchemaValidator: noElicitationValidator,
      instructions:
        "dl hands sub-agent work to other model backends and coding CLIs. delegate_to_local_agent / delegate_batch run agents on the configured gateway, delegate_to_provider on an endpoint you name; submit_codex / poll_codex / cancel_codex run Codex CLI jobs and submit_dsh / poll_dsh / cancel_dsh DeepSeek-harness launcher jobs (start the returned `watch` command in the background: it is the only completion signal); submit_gemini / poll_gemini / cancel_gemini do the same for Gemini through the jailed Antigravity CLI (only with DELEGATE_GEMINI_ALLOW_DANGER=1); submit_agent / poll_agent / cancel_agent run the same agents as background jobs (ids at once, `watch` to wait on) when a run would block too long; list_local_agents shows agents, local_backend_status checks the gateway.",
    },
  );
  registerDelegateToLocalAgent(server, deps);
  registerDelegateBatch(server, deps);
  registerDelegateToProvider(server, deps);
  registerCodexTools(server, deps);
  registerDshTools(server, deps);
  registerAgentJobTools(server, deps);
  registerGeminiTools(server, deps);
  registerListLocalAgents(server, deps);
  registerLocalBackendStatus(server, deps);
  upgradeSubmitTools(server, TASK_TOOLS, tasks);
  answerToolsListFromCatalogue(server, deps.config);
  return server;
}
