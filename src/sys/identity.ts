import { readFileSync } from "node:fs";

/**
 * Who a pid is. A pid alone is not an identity: pids are reused, so before we signal a
 * process recorded earlier (an orphaned job child, a dead server's worker) we check that
 * the pid still has the same start time, and either the same command line or (for a
 * child dl started as a session leader) the same process group and session. The command
 * line changes when the child execs (npm's `#!/usr/bin/env node` wrapper reads
 * `/usr/bin/env node …` right after spawn and `node …` a moment later); the start time,
 * group and session never do.
 */
export interface ProcessIdentity {
  pid: number;
  /**
   * Opaque, only compared for equality. Linux: starttime in clock ticks since boot plus
   * the boot id (so a reboot can never make an old record match). macOS: `ps lstart` in
   * UTC (one-second resolution; the command makes up for it).
   */
  startTime: string;
  /** argv joined with single spaces ("[comm]" for processes without one, e.g. kernel threads). */
  command: string;
  /** Process group id (stable across exec). */
  pgid: number;
  /**
   * Session id (stable across exec); null when the OS cannot tell it. macOS `ps` has no
   * session id column, so there it is the pid for a session leader and null otherwise.
   */
  sid: number | null;
}

const isLinux = process.platform === "linux";

let bootIdCache: string | undefined;
function bootId(): string {
  if (bootIdCache === undefined) {
    try {
      bootIdCache = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().slice(0, 8);
    } catch {
      bootIdCache = "";
    }
  }
  return bootIdCache;
}

export interface ProcStat {
  comm: string;
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Field 9: kernel PF_* flags. */
  flags: number;
  /** Field 22: clock ticks after boot. */
  starttime: string;
}

/**
 * Parses /proc/<pid>/stat. comm (field 2) is wrapped in parentheses but may itself hold
 * spaces and ")" — so the fixed fields are read after the LAST ")".
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const rest = text
    .slice(close + 2)
    .trim()
    .split(" ");
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const starttime = rest[19];
  if (rest.length < 20 || starttime === undefined || !/^\d+$/.test(starttime)) return null;
  return {
    comm: text.slice(open + 1, close),
    state: rest[0] ?? "?",
    ppid: Number(rest[1]),
    pgrp: Number(rest[2]),
    session: Number(rest[3]),
    flags: Number(rest[6]),
    starttime,
  };
}

function validPid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}

const PF_KTHREAD = 0x00200000;

function readStat(pid: number): ProcStat | null {
  return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

function readArgv(pid: number): string[] {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  if (argv.at(-1) === "") argv.pop();
  return argv;
}

function linuxIdentity(pid: number): ProcessIdentity | null {
  try {
    let stat = readStat(pid);
    let argv = readArgv(pid);
    // A child read right after spawn may be inside execve: new memory, no argv yet (and
    // perhaps the parent's comm). It is over within microseconds; wait for it so the
    // recorded command is the one every later read will see.
    for (let i = 0; i < 200 && argv.length === 0 && stat && !(stat.flags & PF_KTHREAD) && stat.state !== "Z"; i++) {
      Bun.sleepSync(1);
      stat = readStat(pid);
      argv = readArgv(pid);
    }
    // A zombie is dead: it only waits for its parent to reap it.
    if (!stat || stat.state === "Z" || stat.state === "X") return null;
    const command = argv.length > 0 ? argv.join(" ") : `[${stat.comm}]`;
    return { pid, startTime: `${stat.starttime}@${bootId()}`, command, pgid: stat.pgrp, sid: stat.session };
  } catch {
    return null; // gone (ENOENT/ESRCH) or hidden from us
  }
}

// "Mon Jan  2 15:04:05 2006" followed by the command.
const LSTART = /^\s*([A-Z][a-z]{2}\s+[A-Z][a-z]{2}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}\s+\d{4})\s+(.*)$/s;

/** The macOS path (also works with Linux procps; exported so Linux CI covers it). */
export function psIdentity(pid: number): ProcessIdentity | null {
  let out: string;
  try {
    const r = Bun.spawnSync({
      cmd: ["ps", "-ww", "-o", "stat=,pgid=,lstart=,command=", "-p", String(pid)],
      // Fixed locale and zone: the same process must print the same lstart for every reader.
      env: { PATH: "/bin:/usr/bin", LC_ALL: "C", TZ: "UTC" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
    });
    if (!r.success) return null; // ps exits 1 when the pid does not exist
    out = r.stdout.toString().replace(/\n+$/, "");
  } catch {
    return null;
  }
  const m = /^\s*(\S+)\s+(\d+)\s+(.*)$/s.exec(out);
  const stat = m?.[1] ?? "Z";
  if (stat.startsWith("Z")) return null;
  const rest = LSTART.exec(m?.[3] ?? "");
  if (!rest?.[1]) return null;
  return {
    pid,
    startTime: rest[1].replace(/\s+/g, " "),
    command: (rest[2] ?? "").trim(),
    pgid: Number(m?.[2]),
    // "s" in STAT marks a session leader (BSD and procps alike): its sid is its pid.
    sid: stat.includes("s") ? pid : null,
  };
}

/** The identity of a live pid, or null if it does not exist, is a zombie, or cannot be read. */
export function identity(pid: number): ProcessIdentity | null {
  if (!validPid(pid)) return null;
  return isLinux ? linuxIdentity(pid) : psIdentity(pid);
}

let selfCache: ProcessIdentity | null = null;
/** This process, as another process would see it (cached: it cannot change). */
export function selfIdentity(): ProcessIdentity {
  selfCache ??= identity(process.pid) ?? { pid: process.pid, startTime: "", command: "", pgid: 0, sid: null };
  return selfCache;
}

/** True if the pid exists and is not a zombie (EPERM counts as alive: it exists). */
export function isAlive(pid: number): boolean {
  if (!validPid(pid)) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (!isLinux) return true;
  try {
    const stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    return stat !== null && stat.state !== "Z" && stat.state !== "X";
  } catch {
    return false;
  }
}

/** Same pid, same start time, same command: the recorded process is still the one running. */
export function sameProcess(expected: ProcessIdentity, actual: ProcessIdentity | null): boolean {
  return (
    actual !== null &&
    expected.startTime !== "" &&
    expected.pid === actual.pid &&
    expected.startTime === actual.startTime &&
    expected.command === actual.command
  );
}

/** Re-reads the pid and compares: the check to make right before signalling a recorded process. */
export function stillRunning(expected: ProcessIdentity): boolean {
  return sameProcess(expected, identity(expected.pid));
}

/**
 * The process is still the session leader dl started: same pid, same start time, and it
 * still leads its own group and session (pgid = sid = pid, which setsid gave it and exec
 * cannot change). Unlike sameProcess this holds across the child's exec, so an npm
 * `#!/usr/bin/env node` wrapper recorded before it became `node …` is still recognised.
 */
export function sameSessionLeader(
  expected: Pick<ProcessIdentity, "pid" | "startTime">,
  actual: ProcessIdentity | null,
): boolean {
  return (
    actual !== null &&
    expected.startTime !== "" &&
    expected.pid === actual.pid &&
    expected.startTime === actual.startTime &&
    actual.pgid === actual.pid &&
    actual.sid === actual.pid
  );
}
