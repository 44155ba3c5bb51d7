import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { listAgents } from "../../agent/frontmatter.ts";
import { builtOnce, lazyObject } from "../../lazy-schema.ts";
import type { ServerDeps } from "../../services.ts";
import { guarded, toolOk } from "../tool-result.ts";
import description from "./list-local-agents.txt" with { type: "text" };

const AgentEntry = builtOnce(() =>
  z.object({
    name: z.string(),
    file: z.string(),
    description: z.string(),
    model: z.string(),
    tools: z.array(z.string()).optional(),
    warnings: z.array(z.string()).optional(),
    error: z.string().optional(),
  }),
);

export function registerListLocalAgents(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "list_local_agents",
    {
      title: "List local agents",
      description: description.trim(),
      inputSchema: {},
      outputSchema: lazyObject(() => ({ agents_dir: z.string(), count: z.number(), agents: z.array(AgentEntry()) })),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const dir = deps.config.paths.agentsDir;
        const agents = await listAgents(dir);
        return toolOk({ agents_dir: dir, count: agents.length, agents });
      }),
  );
}
