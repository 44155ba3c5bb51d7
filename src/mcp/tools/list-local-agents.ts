import { join } from "node:path";
import { z } from "zod";
import { agent } from "../../jobs/providers/agent/index.ts";
import { once } from "../../once.ts";
import type { ServerDeps } from "../../services.ts";
import { checkWorkdir, workdirGuard } from "../../sys/workdir-guard.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./list-local-agents.txt" with { type: "text" };

const AgentEntry = once(() =>
  z.object({
    name: z.string(),
    source: z.enum(["project-agent", "project-skill", "global"]),
    file: z.string(),
    description: z.string(),
    model: z.string(),
    tools: z.array(z.string()).optional(),
    warnings: z.array(z.string()).optional(),
    error: z.string().optional(),
  }),
);

/**
 * The agents a delegation in `workdir` can name, in the order the lookup tries them
 * (agent/lookup.ts): the project's agents, its skills, then the user's global dir. A name
 * the project defines hides the global agent of that name, so that one is not listed.
 */
export function listLocalAgentsTool(deps: ServerDeps): ToolDef {
  return defineTool({
    name: "list_local_agents",
    title: "List local agents",
    description: description.trim(),
    input: () =>
      z.object({ workdir: z.string().max(4096).optional().describe("project path (default: the server's folder)") }),
    output: () => z.object({ workdir: z.string(), count: z.number(), agents: z.array(AgentEntry()) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    backend: agent.facts.name,
    handler: async ({ workdir }) => {
      const dir = checkWorkdir(workdir?.trim() || process.cwd(), workdirGuard(deps.config.paths));
      // The agent file reader (YAML frontmatter) loads with the first call.
      const { listAgents, listSkills } = await import("../../agent/frontmatter.ts");
      const tiers = await Promise.all([
        listAgents(join(dir, ".claude", "agents")).then((a) =>
          a.map((x) => ({ ...x, source: "project-agent" as const })),
        ),
        listSkills(join(dir, ".claude", "skills")).then((a) =>
          a.map((x) => ({ ...x, source: "project-skill" as const })),
        ),
        listAgents(deps.config.paths.agentsDir).then((a) => a.map((x) => ({ ...x, source: "global" as const }))),
      ]);
      const seen = new Set<string>();
      const agents = tiers.flat().filter((a) => !seen.has(a.name) && seen.add(a.name));
      return toolOk({ workdir: dir, count: agents.length, agents });
    },
  });
}
