import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ServerDeps } from "./deps.ts";
import { registerListLocalAgents } from "./tools/list-local-agents.ts";
import { registerLocalBackendStatus } from "./tools/local-backend-status.ts";

/**
 * The MCP server with every tool dl offers. Transport-agnostic: `dl serve` connects it to
 * stdio, tests may connect it to an in-memory pair.
 */
export function createServer(deps: ServerDeps): McpServer {
  const server = new McpServer(
    { name: "delegate-local", title: "dl — delegate to other backends", version: deps.version },
    {
      capabilities: { tools: {}, logging: {} },
      instructions:
        "dl hands sub-agent work to other model backends and coding CLIs. Use list_local_agents to see agents, local_backend_status to check the gateway.",
    },
  );
  registerListLocalAgents(server, deps);
  registerLocalBackendStatus(server, deps);
  return server;
}
