import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Every regular file under `dir` that `keep` accepts, as bytes read leniently (SQLite
 * pages included): what the channel suites search. `keep` is asked before a file is read:
 * the Codex CLI's own state under CODEX_HOME holds megabytes the live search never reads.
 */
export function filesUnder(dir: string, keep: (path: string) => boolean = () => true): [string, string][] {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true }) as string[];
  } catch {
    return [];
  }
  return names.flatMap((name): [string, string][] => {
    const p = join(dir, name);
    if (!keep(p)) return [];
    try {
      return statSync(p).isFile() ? [[p, readFileSync(p).toString("latin1")]] : [];
    } catch {
      return [];
    }
  });
}

/** A process's argv (/proc/<pid>/cmdline, which every local user can read); "" once it is gone. */
export function argvOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ");
  } catch {
    return "";
  }
}
