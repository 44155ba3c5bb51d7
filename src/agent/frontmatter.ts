import { readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { toolGrants } from "./tool-grants.ts";

/**
 * Agent .md files: optional YAML frontmatter between `---` lines, then the prompt body.
 * The same format Claude Code uses for `.claude/agents/*.md` and skills' SKILL.md, so a
 * user's existing agents work unchanged.
 */
export type AgentMeta = {
  name?: string;
  description?: string;
  model?: string;
  /** Claude Code writes tools as "Read, Write, Bash" or as a YAML list; both become a list. */
  tools?: string[];
  /** Every key as written, for fields dl does not interpret. */
  raw: Record<string, unknown>;
};

export type ParsedAgent = {
  meta: AgentMeta;
  body: string;
  /** Set when the frontmatter cannot be used: names the file and the line. */
  error?: string;
};

export type AgentListing = {
  name: string;
  file: string;
  description: string;
  model: string;
  /** dl tools its `tools:` line grants; absent when it has none (all tools). */
  tools?: string[];
  /** Tool names dl could not honour exactly. */
  warnings?: string[];
  error?: string;
};

const FENCE = /^---[ \t]*$/;

/** Parses an agent file's text. Never throws: a malformed header comes back as `error`. */
export function parseFrontmatter(text: string, file: string): ParsedAgent {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (!FENCE.test(lines[0] ?? "")) return { meta: { raw: {} }, body: text.trim() };
  const close = lines.findIndex((l, i) => i > 0 && FENCE.test(l));
  if (close < 0) {
    return {
      meta: { raw: {} },
      body: "",
      error: `${file}:1: frontmatter opened with '---' on line 1 is never closed; add a '---' line after the header`,
    };
  }
  const yamlLines = lines.slice(1, close);
  const body = lines
    .slice(close + 1)
    .join("\n")
    .trim();
  let parsed: unknown;
  try {
    parsed = yamlLines.join("\n").trim() === "" ? {} : Bun.YAML.parse(yamlLines.join("\n"));
  } catch (e) {
    // Bun's YAML errors carry no position in the document, so find the line ourselves.
    const line = 1 + failingLine(yamlLines);
    const why = e instanceof Error ? e.message.replace(/^YAML Parse error:\s*/, "") : "parse error";
    return {
      meta: { raw: {} },
      body,
      error: `${file}:${line}: malformed YAML frontmatter (${why}) near: ${JSON.stringify((lines[line - 1] ?? "").slice(0, 80))}`,
    };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return {
      meta: { raw: {} },
      body,
      error: `${file}:2: frontmatter must be a YAML mapping (key: value lines), found ${Array.isArray(parsed) ? "a list" : typeof parsed}`,
    };
  }
  return { meta: toMeta(parsed as Record<string, unknown>), body };
}

/**
 * 1-based line within the YAML block where parsing breaks: the line after the longest
 * prefix that still parses. Frontmatter is a few dozen lines, so the quadratic scan is
 * cheap, and it handles flow collections that span lines.
 */
function failingLine(yamlLines: string[]): number {
  const n = Math.min(yamlLines.length, 500);
  for (let k = n - 1; k >= 0; k--) {
    try {
      Bun.YAML.parse(yamlLines.slice(0, k).join("\n"));
      return k + 1;
    } catch {
      // keep shrinking
    }
  }
  return 1;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
}

function toMeta(raw: Record<string, unknown>): AgentMeta {
  const meta: AgentMeta = { raw };
  const name = str(raw.name);
  const description = str(raw.description);
  const model = str(raw.model);
  if (name !== undefined) meta.name = name;
  if (description !== undefined) meta.description = description;
  if (model !== undefined) meta.model = model;
  const tools = raw.tools;
  if (typeof tools === "string")
    meta.tools = tools
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
  else if (Array.isArray(tools)) meta.tools = tools.map((t) => String(t).trim()).filter(Boolean);
  return meta;
}

/** Reads and parses one agent file. IO errors are returned as `error`, not thrown. */
export async function parseAgentFile(file: string): Promise<ParsedAgent> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "read error";
    return { meta: { raw: {} }, body: "", error: `${file}: cannot read agent file (${code})` };
  }
  return parseFrontmatter(text, file);
}

/** One agent file as a listing: its name, description, model and the dl tools it may use. */
async function listingOf(name: string, file: string): Promise<AgentListing> {
  const parsed = await parseAgentFile(file);
  const listing: AgentListing = {
    name,
    file,
    description: parsed.meta.description ?? "",
    model: parsed.meta.model ?? "",
  };
  if (parsed.error) listing.error = parsed.error;
  const grants = toolGrants(parsed.meta.tools);
  if (grants.allowed) listing.tools = [...grants.allowed];
  if (grants.warnings.length) listing.warnings = grants.warnings;
  return listing;
}

async function entriesOf(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => !f.startsWith(".")).sort();
  } catch {
    return [];
  }
}

/**
 * Every `*.md` agent directly in `dir`, sorted by name. The name is the file's base name
 * (what a caller passes as agent_name). A missing directory lists nothing; a malformed
 * file is listed with its error so one bad file does not hide the others.
 */
export async function listAgents(dir: string): Promise<AgentListing[]> {
  const files = (await entriesOf(dir)).filter((f) => f.endsWith(".md"));
  return Promise.all(files.map((f) => listingOf(basename(f, ".md"), join(dir, f))));
}

/** Every skill in `dir` (`<name>/SKILL.md`), sorted by name, as agents are. */
export async function listSkills(dir: string): Promise<AgentListing[]> {
  const names = await entriesOf(dir);
  const found = await Promise.all(
    names.map(async (n) => {
      const file = join(dir, n, "SKILL.md");
      return (await Bun.file(file).exists()) ? listingOf(n, file) : null;
    }),
  );
  return found.filter((l): l is AgentListing => l !== null);
}
