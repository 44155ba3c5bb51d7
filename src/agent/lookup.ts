import { stat } from "node:fs/promises";
import { join } from "node:path";
import { DlError } from "../errors.ts";
import { type Surface, wordsFor } from "../surface.ts";
import { type AgentMeta, parseAgentFile } from "./frontmatter.ts";

type AgentSource = "project-agent" | "project-skill" | "global";

export type Agent = {
  /** The name the caller asked for (also the file's base name). */
  name: string;
  file: string;
  source: AgentSource;
  meta: AgentMeta;
  body: string;
};

/** Names become path components, so anything that could walk out of a folder is refused. */
const AGENT_NAME = /^[A-Za-z0-9_-]+$/;

export type LookupOptions = {
  /** The task's workdir; without it only the global directory is searched. */
  workdir?: string;
  /** DELEGATE_LOCAL_AGENTS_DIR (default ~/.claude/agents, resolved by config). */
  agentsDir: string;
  /** Who reads a "not found": a model (tool names) or a person (commands). */
  surface?: Surface;
};

/** The places searched for `name`, most specific first. */
function candidates(name: string, opts: LookupOptions): { file: string; source: AgentSource }[] {
  const out: { file: string; source: AgentSource }[] = [];
  if (opts.workdir) {
    out.push({ file: join(opts.workdir, ".claude", "agents", `${name}.md`), source: "project-agent" });
    out.push({ file: join(opts.workdir, ".claude", "skills", name, "SKILL.md"), source: "project-skill" });
  }
  out.push({ file: join(opts.agentsDir, `${name}.md`), source: "global" });
  return out;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * 3-tier lookup: project agent, then project skill, then the global agents directory.
 * The first file that exists wins, even if malformed: a broken project agent must be
 * reported, not silently replaced by a global one of the same name.
 */
export async function lookupAgent(name: string, opts: LookupOptions): Promise<Agent> {
  if (!AGENT_NAME.test(name)) {
    throw new DlError(
      "bad_input",
      `agent name ${JSON.stringify(name.slice(0, 80))} is not allowed: use only letters, digits, '-' and '_' (the file name without .md)`,
    );
  }
  const places = candidates(name, opts);
  for (const { file, source } of places) {
    if (!(await isFile(file))) continue;
    const parsed = await parseAgentFile(file);
    if (parsed.error) {
      throw new DlError("bad_input", `agent '${name}' cannot be loaded: ${parsed.error}`, { file, source });
    }
    return { name, file, source, meta: parsed.meta, body: parsed.body };
  }
  throw new DlError(
    "not_found",
    `agent '${name}' not found; looked in: ${places.map((p) => p.file).join(", ")}. ` +
      wordsFor(opts.surface).agentHelp,
    { looked_in: places.map((p) => p.file) },
  );
}
