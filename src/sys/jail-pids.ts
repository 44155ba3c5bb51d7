import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../errors.ts";

/**
 * A pids cgroup of its own for one jail, used when dl runs as root: the kernel never
 * applies RLIMIT_NPROC to processes whose real uid is root, user namespace or not, so a
 * fork bomb would run into the host's pid limit. The jail's first process is moved in
 * while bwrap still waits on its block fd, so everything the command starts is inside.
 * cgroup v1 (a `pids` hierarchy) and v2 (the `pids` controller enabled at the root) both
 * work; with neither the jail does not start.
 */

const CGROUP = "/sys/fs/cgroup";
/** This process's jail cgroups not yet removed (a stopping dl removes them before it exits). */
const pending = new Set<string>();

function pidsRoot(): string | null {
  const v1 = join(CGROUP, "pids");
  if (existsSync(join(v1, "cgroup.procs"))) return v1;
  try {
    const enabled = readFileSync(join(CGROUP, "cgroup.subtree_control"), "utf8").split(/\s+/);
    if (enabled.includes("pids")) return CGROUP;
  } catch {
    // not cgroup v2 either
  }
  return null;
}

/** Puts `pid` in a new cgroup capped at `max` processes; returns its removal. */
export function pidsCgroup(pid: number, max: number): () => void {
  const root = pidsRoot();
  if (!root) {
    throw new DlError(
      "jail_unavailable",
      `no pids cgroup to cap the jail's processes (as root, RLIMIT_NPROC does not apply): mount cgroup2 with the pids controller enabled (${CGROUP}/cgroup.subtree_control) or the cgroup v1 pids hierarchy`,
    );
  }
  sweep(root);
  const dir = join(root, `dl-jail-${pid}`);
  mkdirSync(dir);
  try {
    writeFileSync(join(dir, "pids.max"), String(max));
    writeFileSync(join(dir, "cgroup.procs"), String(pid));
  } catch (e) {
    rmdirSync(dir);
    throw e;
  }
  pending.add(dir);
  return () => removeWhenEmpty(dir, 50);
}

/**
 * Empty cgroups of jails whose dl exited before their last process was reaped: rmdir
 * removes only an empty cgroup, so a running jail's is never touched. One whose first
 * process is alive is skipped too: another dl may have just made it and not yet moved
 * that process in (empty for a moment), and removing it then would fail that jail's start.
 */
function sweep(root: string): void {
  for (const name of readdirSync(root)) {
    const pid = /^dl-jail-(\d+)$/.exec(name)?.[1];
    if (!pid || alive(Number(pid))) continue;
    try {
      rmdirSync(join(root, name));
    } catch {
      // in use
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** rmdir; true once the cgroup is gone (removed now, or already), false while it is busy. */
function tryRemove(dir: string): boolean {
  try {
    rmdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EBUSY") return false;
  }
  pending.delete(dir);
  return true;
}

/** rmdir succeeds once the last process has been reaped, a moment after the jail ends. */
function removeWhenEmpty(dir: string, triesLeft: number): void {
  if (!tryRemove(dir) && triesLeft > 0) setTimeout(() => removeWhenEmpty(dir, triesLeft - 1), 100).unref();
}

/**
 * For a dl on its way out (its groups already ended): every jail cgroup it made is
 * removed before it exits, rather than left for the next jail start's sweep. What still
 * runs in one is killed through cgroup v2's cgroup.kill; waits at most `ms`.
 */
export async function removeJailCgroups(ms: number): Promise<number> {
  const deadline = performance.now() + ms;
  for (const dir of pending) {
    try {
      if (existsSync(join(dir, "cgroup.kill"))) writeFileSync(join(dir, "cgroup.kill"), "1");
    } catch {
      // v1, or already gone
    }
  }
  while ([...pending].some((d) => !tryRemove(d)) && performance.now() < deadline) await Bun.sleep(10);
  return pending.size;
}
