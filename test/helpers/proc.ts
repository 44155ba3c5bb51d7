import { readFileSync } from "node:fs";

/**
 * Is `pid` a live process? Tests use this as their own oracle (independent of
 * src/sys/identity.ts) when checking that dl killed something. A zombie still answers
 * kill(pid, 0) — orphans may wait a while for a lazy init to reap them — so on Linux its
 * /proc state decides.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    // No /proc (macOS): kill(pid, 0) answered, so it exists.
    return process.platform !== "linux";
  }
}
