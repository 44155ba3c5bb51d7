import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { DlRead } from "./dl-reads.ts";
import { readRegularHead } from "./file-head.ts";
import { canonicalPath } from "./paths.ts";

/**
 * What the user's own Claude Code state names of a project, outside any project setting:
 * a plugin marketplace the user added (`claude plugin marketplace add ./market`) is listed
 * in `~/.claude/plugins/known_marketplaces.json` (its `installLocation`, and the
 * `source.path` of a directory or file source) and declared in `~/.claude/settings.json`
 * (`extraKnownMarketplaces`), both as Claude Code writes them (measured with the real CLI
 * from npm). Claude Code copies an installed plugin afresh from that folder at every
 * session and runs its hooks, so when the folder lies in a workdir it is the host's
 * configuration as much as `.claude/` is: kept read-only whole, like what dl reads
 * (dl-reads.ts), and read when a job or a write is planned, not once at start, so a
 * marketplace added while dl serves is covered at the next job.
 */

const MAX_BYTES = 1 << 20;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A regular file's JSON object (not through a link), or null: Claude Code reads nothing from anything else either. */
function readJson(path: string): Json | null {
  const text = readRegularHead(path, MAX_BYTES);
  try {
    const v: unknown = text === null ? null : JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

/** A source's folder: `directory` names it, `file` names its marketplace.json (in `.claude-plugin/` or not). */
function sourceDir(source: unknown): string | null {
  if (!isObject(source) || typeof source.path !== "string" || !isAbsolute(source.path)) return null;
  if (source.source === "directory") return resolve(source.path);
  if (source.source !== "file") return null;
  const dir = dirname(resolve(source.path));
  return basename(dir) === ".claude-plugin" ? dirname(dir) : dir;
}

/** The marketplace folders `known` (name → entry) names, each with the file that names it. */
function foldersOf(known: unknown, file: string): DlRead[] {
  if (!isObject(known)) return [];
  return Object.entries(known).flatMap(([name, m]) => {
    if (!isObject(m)) return [];
    const install = typeof m.installLocation === "string" && isAbsolute(m.installLocation) ? m.installLocation : null;
    return [sourceDir(m.source), install]
      .filter((d): d is string => d !== null)
      .map((d) => ({
        path: canonicalPath(d),
        kind: "dir" as const,
        setting: `Claude Code's ${file} (marketplace ${name})`,
        reader: "Claude Code",
      }));
  });
}

/** Claude Code's configuration folder as dl's settings found it (dl-reads.ts), else `~/.claude`. */
export function claudeDirOf(reads: readonly DlRead[] | undefined, home: string | undefined): string | undefined {
  return reads?.find((r) => r.claudeConfig)?.path ?? (home ? join(home, ".claude") : undefined);
}

/** Claude Code's state file: `.claude.json` in CLAUDE_CONFIG_DIR when that is set, else in the home folder. */
export function claudeStateFile(claudeDir: string, home: string | undefined): string {
  return home && claudeDir === canonicalPath(join(home, ".claude"))
    ? join(home, ".claude.json")
    : join(claudeDir, ".claude.json");
}

/** The folders the user's Claude Code state (in its configuration folder `dir`) loads plugins from. */
export function claudeHomeReads(dir: string | undefined): DlRead[] {
  if (!dir) return [];
  const known = readJson(join(dir, "plugins", "known_marketplaces.json"));
  const settings = readJson(join(dir, "settings.json"));
  const out = [
    ...foldersOf(known, "~/.claude/plugins/known_marketplaces.json"),
    ...foldersOf(settings?.extraKnownMarketplaces, "~/.claude/settings.json"),
  ];
  return out.filter((d, i) => out.findIndex((e) => e.path === d.path) === i);
}
