/**
 * What an agent's `tools:` frontmatter grants, in dl's tool names.
 *
 * Agent files are shared with Claude Code, so their `tools:` lines use its names. Each
 * maps to the one dl tool that does the same job, never a wider one: Edit and MultiEdit
 * grant edit_file only (not a whole-file write_file), Write grants write_file, Grep grants
 * search_files and Glob and LS grant list_files, never run_bash (a shell could also
 * write). So `tools: Read, Grep, Glob` is read-only. dl's own names are accepted too.
 * No `tools:` line grants every tool.
 */
type DlToolName = "read_file" | "write_file" | "edit_file" | "search_files" | "list_files" | "run_bash";

const GRANTS = new Map<string, DlToolName>([
  ["read", "read_file"],
  ["notebookread", "read_file"],
  ["grep", "search_files"],
  ["glob", "list_files"],
  ["ls", "list_files"],
  ["write", "write_file"],
  ["edit", "edit_file"],
  ["multiedit", "edit_file"],
  ["notebookedit", "edit_file"],
  ["bash", "run_bash"],
  ["read_file", "read_file"],
  ["write_file", "write_file"],
  ["edit_file", "edit_file"],
  ["search_files", "search_files"],
  ["list_files", "list_files"],
  ["run_bash", "run_bash"],
]);

/** Claude Code tools dl knows but has no counterpart for: granted nothing, said so. */
const NO_COUNTERPART = new Set(["webfetch", "websearch", "task", "todowrite", "bashoutput", "killshell", "agent"]);

export type ToolGrants = {
  /** dl tools the agent may use; undefined when it has no `tools:` line (all tools). */
  allowed?: ReadonlySet<DlToolName>;
  /** One line per name dl could not honour exactly, for list_local_agents. */
  warnings: string[];
};

/** Maps `tools:` names (as the frontmatter parser listed them) to dl's tools. */
export function toolGrants(names: readonly string[] | undefined): ToolGrants {
  if (names === undefined) return { warnings: [] };
  const allowed = new Set<DlToolName>();
  const warnings: string[] = [];
  for (const name of names) {
    // Claude Code permits `Bash(git diff:*)`: dl grants the tool but cannot hold it to the pattern.
    const scoped = /^([A-Za-z_]+)\s*\((.*)\)$/.exec(name);
    const base = (scoped?.[1] ?? name).trim();
    const mapped = GRANTS.get(base.toLowerCase());
    if (mapped) {
      allowed.add(mapped);
      if (scoped) warnings.push(`tools: ${name} grants ${mapped} without the (${scoped[2]}) restriction`);
    } else if (NO_COUNTERPART.has(base.toLowerCase())) {
      warnings.push(`tools: ${name} has no dl counterpart and is not offered`);
    } else {
      warnings.push(
        `tools: unknown tool name ${JSON.stringify(name)} is ignored (dl knows Read, Write, Edit, MultiEdit, NotebookEdit, Bash, Glob, Grep, LS)`,
      );
    }
  }
  return { allowed, warnings };
}
