import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

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

/**
 * kill(2) for tests, refusing what would hit the test runner itself: a pid of 0 or a
 * negative zero (an empty pid file, a null column) signals our own process group, and a
 * SIGKILL there takes the whole CI run down with it.
 */
export function killPid(pid: number, signal: NodeJS.Signals = "SIGKILL", wholeGroup = false): void {
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) throw new Error(`refusing to signal pid ${pid}`);
  process.kill(wholeGroup ? -pid : pid, signal);
}

/**
 * Live (non-zombie) pids whose process group or session is `leader`: everything a job
 * child started, as the kernel sees it. The test's own oracle, independent of src/sys.
 */
export function groupMembers(leader: number): number[] {
  if (process.platform !== "linux") {
    const r = Bun.spawnSync(["ps", "-ax", "-o", "pid=,pgid=,stat="], { env: { PATH: "/bin:/usr/bin" } });
    return r.stdout
      .toString()
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter(([, pgid, stat]) => Number(pgid) === leader && !stat?.startsWith("Z"))
      .map(([pid]) => Number(pid));
  }
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if ((Number(f[2]) === leader || Number(f[3]) === leader) && f[0] !== "Z" && f[0] !== "X") out.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** True once `pid` has the job store under `dir` open: a watcher is past start-up and polling. */
export function hasStoreOpen(pid: number, dir: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(join(dir, "jobs.sqlite"));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * Live (non-zombie) host pids whose command line contains `marker`. As root, dl runs the
 * children it does not jail in a pid namespace of their own (src/sys/pid-namespace.ts),
 * so a pid such a child reports (`$$`, `$!`) is its namespace's, not the host's: tests
 * find those processes by a marker in their argv instead, which no namespace changes.
 */
export function liveWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, "utf8").includes(marker)) continue;
      if (pidAlive(Number(name))) out.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return out;
}
