import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Places under a real HOME where dl (or a careless test) would write: the HOME itself
 * (new entries), the XDG/macOS cache and config roots, and every default state dir.
 * Each is recorded as name → mtime of its direct entries.
 */
const WATCHED = [
  "",
  ".cache",
  ".config",
  ".local/state",
  "Library/Caches",
  ".claude",
  ".claude/agents",
  ".codex",
  ".codex-jobs",
  ".gemini-jobs",
  ".dsh-jobs",
  ".cache/claude-delegate-local",
];
/** Tools the test runner itself may touch (npm/bun caches); they are not dl's doing. */
const IGNORED = new Set([
  ".npm",
  ".bun",
  ".cache/bun",
  ".cache/node",
  ".bash_history",
  ".lesshst",
  ".viminfo",
  ".node_repl_history",
]);

export type HomeSnapshot = Map<string, number>;

export function snapshotHome(home: string): HomeSnapshot {
  const snap: HomeSnapshot = new Map();
  for (const rel of WATCHED) {
    const dir = join(home, rel);
    if (!existsSync(dir)) continue;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const key = rel ? `${rel}/${name}` : name;
      if (IGNORED.has(key)) continue;
      try {
        snap.set(key, statSync(join(dir, name)).mtimeMs);
      } catch {
        // Vanished between readdir and stat: not ours.
      }
    }
  }
  return snap;
}

/** Entries that appeared, or whose mtime moved, in a dl-owned place. */
export function diffHome(before: HomeSnapshot, after: HomeSnapshot): string[] {
  const out: string[] = [];
  for (const [key, mtime] of after) {
    const prev = before.get(key);
    if (prev === undefined) out.push(`new ${key}`);
    else if (prev !== mtime && isDlOwned(key)) out.push(`modified ${key}`);
  }
  return out;
}

function isDlOwned(key: string): boolean {
  return /(^|\/)(\.codex-jobs|\.gemini-jobs|\.dsh-jobs|claude-delegate-local|\.claude)(\/|$)/.test(key);
}
