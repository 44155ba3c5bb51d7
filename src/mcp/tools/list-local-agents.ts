import { z } from "zod";
import { agent } from "../../jobs/providers/agent/index.ts";
import { once } from "../../once.ts";
import type { ServerDeps } from "../../services.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./list-local-agents.txt" with { type: "text" };

const AgentEntry = once(() =>
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

export function listLocalAgentsTool(deps: ServerDeps): ToolDef {
  return defineTool({
    name: "list_local_agents",
    title: "List local agents",
    description: description.trim(),
    input: () => z.object({}),
    output: () => z.object({ agents_dir: z.string(), count: z.number(), agents: z.array(AgentEntry()) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    backend: agent.facts.name,
    handler: async () => {
      const dir = deps.config.paths.agentsDir;
      // The agent file reader (YAML frontmatter) loads with the first call.
      const { listAgents } = await import("../../agent/frontmatter.ts");
      const agents = await listAgents(dir);
      return toolOk({ agents_dir: dir, count: agents.length, agents });
    },
  });
}
