import { describeError } from "../errors.ts";
import type { JobStore } from "../store/jobs.ts";
import type { JobPatch, JobRow, JobStatus } from "../store/types.ts";
import { sameSessionLeader } from "../sys/identity.ts";
import { terminateGroup } from "../sys/process.ts";
import { deadOwnerStatus } from "./dead-owner.ts";
import type { Identities } from "./machine.ts";
import { jobDirOf, readOutcome } from "./outcome-file.ts";

export interface ReapAction {
  id: string;
  /**
   * What the row became (or would become, on a dry run): killed_on_restart or lost, or
   * the end its server kept in the job's outcome file but could not write to the store.
   */
  status: JobStatus;
  /** The orphan child whose identity matched and that was (or would be) killed. */
  killed_pid: number | null;
  reason: string;
}

/** True when the row's owning server is still the same live process. */
export function ownerAlive(row: Pick<JobRow, "owner_pid" | "owner_start">, ids: Identities): boolean {
  if (row.owner_pid === null) return false;
  const now = ids.read(row.owner_pid);
  if (!now) return false;
  return row.owner_start === null || now.startTime === row.owner_start;
}

/**
 * The recorded child is still the very process we started: same pid and start time, and
 * still the leader of the group and session dl created for it (exec keeps both, so the
 * npm Codex wrapper that became `node …` after the row recorded `/usr/bin/env node …`
 * still matches). A pid the OS reused for something else has another start time and
 * leads no such group: it fails this check and is never signalled.
 */
function childVerified(row: JobRow, ids: Identities): "leader" | "survivors" | null {
  if (row.child_pid === null || row.child_pgid === null || row.child_start === null) return null;
  // dl starts every child with setsid: a row naming another group was not written by us.
  if (row.child_pgid !== row.child_pid) return null;
  const now = ids.read(row.child_pid);
  if (now) return sameSessionLeader({ pid: row.child_pid, startTime: row.child_start }, now) ? "leader" : null;
  // The leader is gone. The OS gives no process a pid that is still the number of a
  // process group with members, so members of group child_pgid can only be the rest of
  // the group dl created (a jail's inner process, a CLI's helpers): they are ours to stop.
  return ids.groupAlive?.(row.child_pgid) ? "survivors" : null;
}

const KILLED_REASON = {
  leader: "owner server died; its child was still running and has been killed",
  survivors:
    "owner server died; its child had exited but processes of its group were still running and have been killed",
} as const;

/** A dead owner's row with no verified child left to kill: how deadOwnerStatus reads it. */
function goneAction(row: JobRow): ReapAction {
  const status = deadOwnerStatus(row);
  const reason =
    row.status === "queued"
      ? "owner server died before the job started"
      : status === "killed_on_restart"
        ? "owner server died and its jailed run died with it; what it changed in the workdir stays: review it before resubmitting"
        : "owner server died; no verified child left to stop";
  return { id: row.id, status, killed_pid: null, reason };
}

export interface ReapOptions {
  identities: Identities;
  now: () => number;
  /** Rows of this server are never reaped (it is alive: it is us). */
  selfServerId?: string;
  dryRun?: boolean;
  graceMs?: number;
}

/**
 * Ends every active row whose owner died: a verified orphan child is killed (its whole
 * group) → `killed_on_restart`; anything else reads as deadOwnerStatus says (`lost`, or
 * `killed_on_restart` for a jailed run that died with its server). Nothing unverified is
 * signalled.
 */
export async function reapDeadOwners(store: JobStore, opts: ReapOptions): Promise<ReapAction[]> {
  const actions: ReapAction[] = [];
  const alive = new Map<string, boolean>();
  for (const row of store.listActive()) {
    if (opts.selfServerId && row.server_id === opts.selfServerId) continue;
    const key = `${row.owner_pid}:${row.owner_start}`;
    let live = alive.get(key);
    if (live === undefined) {
      live = ownerAlive(row, opts.identities);
      alive.set(key, live);
    }
    if (live) continue;
    const kept =
      row.status === "running" ? await readOutcome(jobDirOf(store.stateDir, row.id), row.id, row.started_at) : null;
    if (kept) {
      actions.push(recordKept(store, row, kept, opts));
      continue;
    }
    const verified = row.status === "running" ? childVerified(row, opts.identities) : null;
    const action: ReapAction = verified
      ? { id: row.id, status: "killed_on_restart", killed_pid: row.child_pid, reason: KILLED_REASON[verified] }
      : goneAction(row);
    actions.push(action);
    if (opts.dryRun) continue;
    if (verified) {
      try {
        await terminateGroup(row.child_pgid!, opts.graceMs ?? 2000);
      } catch (e) {
        action.reason += ` (stopping it failed: ${describeError(e)})`;
      }
    }
    store.update(row.id, { status: action.status, failure_kind: null, ended_at: opts.now(), persist_error: null }, [
      row.status,
    ]);
  }
  return actions;
}

/**
 * The job had ended, and its server kept the end in the job's outcome file, but the store
 * could not be written before that server died: record that end now, not `lost`. The
 * child ran to its end (the file is written after its group is gone), so nothing is killed.
 */
function recordKept(store: JobStore, row: JobRow, kept: JobPatch, opts: ReapOptions): ReapAction {
  const note = "owner server died before the store could record the job's end; recorded from its outcome file";
  const action: ReapAction = { id: row.id, status: kept.status ?? "lost", killed_pid: null, reason: note };
  if (opts.dryRun) return action;
  try {
    store.update(row.id, { ...kept, persist_error: note }, ["running"]);
  } catch (e) {
    // A record the store refuses (a value too big) still ends the row, as failed.
    const why = `${note}, but the store refused it (${describeError(e)})`;
    store.update(
      row.id,
      {
        status: "failed",
        failure_kind: "infra",
        exit_code: kept.exit_code ?? null,
        ended_at: kept.ended_at ?? opts.now(),
        persist_error: why.slice(0, 500),
      },
      ["running"],
    );
    action.status = "failed";
    action.reason = why;
  }
  return action;
}
