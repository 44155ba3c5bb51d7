import { editFileTool } from "./edit-file.ts";
import { listFilesTool } from "./list-files.ts";
import { readFileTool } from "./read-file.ts";
import { runBashTool } from "./run-bash.ts";
import { searchFilesTool } from "./search-files.ts";
import {
  READ_FILE_DEFAULTS,
  type ReadFileSettings,
  type RunBashSettings,
  SEARCH_DEFAULTS,
  type SearchSettings,
  WRITE_FILE_DEFAULTS,
  type WriteFileSettings,
} from "./settings.ts";
import { type AgentTool, fail } from "./types.ts";
import { writeFileTool } from "./write-file.ts";

export type ToolSettings = {
  read: ReadFileSettings;
  write: WriteFileSettings;
  bash: RunBashSettings;
  search: SearchSettings;
};

/**
 * The agent's tool set, by name, in the order the model sees them (the same for every
 * run, so the prompt's prefix is too). run_bash is left out entirely when disabled.
 */
export function buildTools(
  s: Partial<Pick<ToolSettings, "read" | "write" | "search">> & { bash: RunBashSettings },
): Map<string, AgentTool> {
  const write = s.write ?? WRITE_FILE_DEFAULTS;
  const search = s.search ?? SEARCH_DEFAULTS;
  const tools = [
    readFileTool(s.read ?? READ_FILE_DEFAULTS),
    writeFileTool(write),
    editFileTool(write),
    searchFilesTool(search),
    listFilesTool(search),
  ];
  if (s.bash.enabled) tools.push(runBashTool(s.bash));
  return new Map(tools.map((t) => [t.spec.name, t]));
}

/**
 * The tools an agent is offered, from everything `buildTools` made and what its `tools:`
 * frontmatter grants (undefined: all). A tool left out is still answered when the model
 * calls it anyway, with an error that says it is not granted, rather than "unknown tool".
 */
export function grantTools(
  all: Map<string, AgentTool>,
  allowed: ReadonlySet<string> | undefined,
  agentName: string,
): { offered: AgentTool[]; callable: Map<string, AgentTool> } {
  if (allowed === undefined) return { offered: [...all.values()], callable: all };
  const offered = [...all.values()].filter((t) => allowed.has(t.spec.name));
  const names = offered.map((t) => t.spec.name).join(", ") || "no tools";
  const callable = new Map(offered.map((t) => [t.spec.name, t]));
  for (const name of all.keys()) {
    if (callable.has(name)) continue;
    callable.set(name, {
      spec: { name, description: "", input_schema: { type: "object", properties: {} } },
      refused: true,
      run: async () =>
        fail(
          `${name} is not available to agent '${agentName}': its tools: frontmatter grants ${names}. Do the task with those tools, or report what you could not do.`,
        ),
    });
  }
  return { offered, callable };
}
