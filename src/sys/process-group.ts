import { readdirSync, readFileSync } from "node:fs";
import { DlError } from "../errors.ts";
import { trackedGroups, untrackGroup } from "./group-registry.ts";
import { removeJailCgroups } from "./jail-pids.ts";

/**
 * Signals and liveness for whole process groups (children run as session leaders, so
 * pgid = sid = pid and `-pgid` reaches every grandchild they fork).
 */

let ownGroup: number | null | undefined;

/** Our own process group, so a bug can never make us signal ourselves and our parent. */
function ownPgid(): number | null {
  if (ownGroup !== undefined) return ownGroup;
  ownGroup = null;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ownGroup = Number(fields[2]); // state ppid pgrp …
  } catch {
    try {
      const r = Bun.spawnSync({
        cmd: ["ps", "-o", "pgid=", "-p", String(process.pid)],
        env: { PATH: "/bin:/usr/bin" },
      });
      const n = Number(r.stdout.toString().trim());
      if (Number.isInteger(n) && n > 0) ownGroup = n;
    } catch {
      // Unknown: the pid > 1 and != own pid checks still apply.
    }
  }
  return ownGroup;
}

function checkPgid(pgid: number): void {
  if (!Number.isInteger(pgid) || pgid <= 1 || pgid === process.pid || pgid === ownPgid()) {
    throw new DlError("internal", `refusing to signal process group ${pgid}`, { pgid });
  }
}

/** Sends a signal to every process of the group. False if the group is already gone. */
export function killGroup(pgid: number, signal: NodeJS.Signals | 0 = "SIGTERM"): boolean {
  checkPgid(pgid);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true; // exists, but not ours: still alive
    throw e;
  }
}

/**
 * Linux only: the groups among `pgids` with a member that is not a zombie, in one walk
 * of /proc. An unreaped zombie keeps kill(-pgid, 0) succeeding, and an init that never
 * reaps would make a dead group look alive forever. null when /proc cannot tell.
 */
function groupsWithLiveMember(pgids: ReadonlySet<number>): Set<number> | null {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  const found = new Set<number>();
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pgid = Number(f[2]);
    if (pgids.has(pgid) && f[0] !== "Z" && f[0] !== "X") {
      found.add(pgid);
      if (found.size === pgids.size) break;
    }
  }
  return found;
}

/** The groups among `pgids` that still have a live process; the others are untracked. */
function aliveAmong(pgids: readonly number[]): number[] {
  const signalled = pgids.filter((p) => killGroup(p, 0));
  const live = signalled.length ? groupsWithLiveMember(new Set(signalled)) : new Set<number>();
  const alive = live ? signalled.filter((p) => live.has(p)) : signalled;
  for (const p of pgids) if (!alive.includes(p)) untrackGroup(p);
  return alive;
}

/** True while any process of the group is alive. */
export function groupAlive(pgid: number): boolean {
  return aliveAmong([pgid]).length > 0;
}

export interface TerminateResult {
  /** SIGKILL was needed (something outlived the grace period). */
  killed: boolean;
  /** The group is gone; false only if it survived SIGKILL for `killWaitMs`. */
  gone: boolean;
}

/** Waits until none of `pgids` is alive or `ms` passes; returns the survivors. */
async function waitAllGone(pgids: readonly number[], ms: number): Promise<number[]> {
  const deadline = performance.now() + ms;
  let step = 5;
  let left = [...pgids];
  for (;;) {
    left = aliveAmong(left);
    if (left.length === 0 || performance.now() >= deadline) return left;
    await Bun.sleep(Math.min(step, Math.max(1, deadline - performance.now())));
    step = Math.min(step * 2, 50);
  }
}

/** SIGTERM the group, SIGKILL it after `graceMs`, resolve once it is gone. */
export async function terminateGroup(pgid: number, graceMs: number, killWaitMs = 5000): Promise<TerminateResult> {
  if (!killGroup(pgid, "SIGTERM")) {
    untrackGroup(pgid);
    return { killed: false, gone: true };
  }
  if ((await waitAllGone([pgid], graceMs)).length === 0) return { killed: false, gone: true };
  killGroup(pgid, "SIGKILL");
  return { killed: true, gone: (await waitAllGone([pgid], killWaitMs)).length === 0 };
}

export interface TerminateAllResult {
  /** Groups that were alive when asked to stop. */
  signalled: number;
  /** Of those, how many needed SIGKILL. */
  killed: number;
  /** Groups still alive after SIGKILL and `killWaitMs` (stuck in the kernel, or not ours to kill). */
  survivors: number[];
}

/**
 * Stops every group this process started and still tracks, all at once: SIGTERM, up to
 * `graceMs` for them to leave, SIGKILL for the rest, then up to `killWaitMs` more, and as
 * long again for the jails' pids cgroups to be removed. Bounded by graceMs + 2 × killWaitMs
 * (plus one /proc walk); never throws.
 */
export async function terminateAllGroups(graceMs: number, killWaitMs = 1000): Promise<TerminateAllResult> {
  const signalled: number[] = [];
  for (const pgid of trackedGroups()) {
    try {
      if (killGroup(pgid, "SIGTERM")) signalled.push(pgid);
      else untrackGroup(pgid);
    } catch {
      untrackGroup(pgid); // a pgid checkPgid refuses was never ours to signal
    }
  }
  const stubborn = await waitAllGone(signalled, graceMs);
  for (const pgid of stubborn) killGroup(pgid, "SIGKILL");
  const survivors = await waitAllGone(stubborn, killWaitMs);
  // The jails' pids cgroups (as root) go with their groups, not at the next jail start.
  await removeJailCgroups(killWaitMs);
  return { signalled: signalled.length, killed: stubborn.length, survivors };
}

/**
 * SIGKILL every tracked group now, without waiting: the last resort of a shutdown that
 * ran out of time. Returns how many groups were signalled.
 */
export function killAllGroupsNow(): number {
  let n = 0;
  for (const pgid of trackedGroups()) {
    try {
      if (killGroup(pgid, "SIGKILL")) n++;
    } catch {
      // refused pgid: skip
    }
    untrackGroup(pgid);
  }
  return n;
}
