import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { JobPatch, JobRow, JobStatus } from "../../store/types.ts";
import { jobDirOf } from "../../sys/paths.ts";
import { terminateGroup } from "../../sys/process.ts";
import { redact } from "../../sys/redact.ts";
import { recordJobEnd } from "../../usage/ledger.ts";
import { orphanPlan } from "./display-state.ts";
import { scrubJobDir } from "./job-files.ts";
import { childVerified, ownerAlive } from "./liveness.ts";
import type { Identities } from "./machine.ts";
import { readOutcome } from "./outcome-file.ts";

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

export interface ReapOptions {
  identities: Identities;
  now: () => number;
  /** Rows of this server are never reaped (it is alive: it is us). */
  selfServerId?: string;
  dryRun?: boolean;
  graceMs?: number;
  /**
   * What a reaped run spent, from the files it left (Provider.spent), for a row whose
   * usage its dead server never wrote: kept in the row, and the row goes into the ledger.
   */
  spent?: (row: JobRow, jobDir: string) => Record<string, unknown> | null;
  /**
   * A dead server's queued job, handed to a supervisor of its own to wait for its turn
   * (jobs outlive their window) instead of being recorded lost; true when it was.
   */
  adoptQueued?: (row: JobRow) => boolean;
}

/**
 * Ends every running row whose owner died: a verified orphan child is killed (its whole
 * group) → `killed_on_restart`; anything else reads as deadOwnerStatus says (`lost`, or
 * `killed_on_restart` for a jailed run that died with its server). Nothing unverified is
 * signalled. A queued row is handed to a supervisor of its own (reapQueued).
 */
export async function reapDeadOwners(store: JobStore, opts: ReapOptions): Promise<ReapAction[]> {
  const actions: ReapAction[] = [];
  const alive = new Map<string, boolean>();
  for (const row of store.listActive()) {
    if (opts.selfServerId && row.server_id === opts.selfServerId) continue;
    const key = `${row.owner_pid}:${row.owner_start}`;
    let ownerLive = alive.get(key);
    if (ownerLive === undefined) {
      ownerLive = ownerAlive(row, opts.identities);
      alive.set(key, ownerLive);
    }
    if (ownerLive) continue;
    if (row.status === "queued") {
      actions.push(reapQueued(store, row, opts));
      continue;
    }
    const kept =
      row.status === "running" ? await readOutcome(jobDirOf(store.stateDir, row.id), row.id, row.started_at) : null;
    if (kept) {
      actions.push(recordKept(store, row, kept, opts));
      continue;
    }
    const live = { owner: false, child: row.status === "running" ? childVerified(row, opts.identities) : null };
    const story = orphanPlan(row, live);
    const verified = story.plan.kills;
    const action: ReapAction = {
      id: row.id,
      status: story.plan.becomes,
      killed_pid: verified ? row.child_pid : null,
      // The story dl status and dl wait tell, in the tense of what happened (or would).
      reason: `${story.why}; ${opts.dryRun ? `would ${story.act}` : story.done}`,
    };
    actions.push(action);
    if (opts.dryRun) continue;
    if (verified) {
      try {
        await terminateGroup(row.child_pgid!, opts.graceMs ?? 2000);
      } catch (e) {
        action.reason += ` (stopping it failed: ${describeError(e)})`;
      }
    }
    const usage = row.status === "running" && row.usage === null ? spentUsage(store, row, opts) : row.usage;
    const ended = { status: action.status, failure_kind: null, ended_at: opts.now(), persist_error: null, usage };
    // Its supervisor died before it could check what the child left: done here instead,
    // before the row reads ended (a reader may look the moment it ends).
    if (row.status === "running") scrubJobDir(row.id, jobDirOf(store.stateDir, row.id));
    if (store.update(row.id, ended, [row.status]) && row.status === "running") recordJobEnd(store, row.id);
  }
  return actions;
}

/**
 * A dead server's queued job never started: it is handed to a supervisor of its own,
 * which waits in the queue for it (the window's work goes on). Only a reaper that cannot
 * start one (an engine without supervisors), or whose start failed, records it lost.
 */
function reapQueued(store: JobStore, row: JobRow, opts: ReapOptions): ReapAction {
  const story = orphanPlan(row, { owner: false, child: null });
  const action: ReapAction = { id: row.id, status: "queued", killed_pid: null, reason: "" };
  if (opts.adoptQueued && opts.dryRun) return { ...action, reason: `${story.why}; would ${story.act}` };
  if (opts.adoptQueued?.(row)) return { ...action, reason: `${story.why}; ${story.done}` };
  const why = opts.adoptQueued ? "no supervisor could be started for it" : "this reaper starts no supervisors";
  const lost = { ...action, status: "lost" as const, reason: `${story.why}; ${why}, so it is recorded lost` };
  if (opts.dryRun) return { ...lost, reason: `${story.why}; ${why}, so it would be recorded lost` };
  const ended = { status: "lost" as const, failure_kind: null, ended_at: opts.now(), persist_error: null };
  store.update(row.id, { ...ended, queue_reason: null }, ["queued"]);
  return lost;
}

/** The reaped run's usage from its files, as its row keeps it; none when the provider cannot tell. */
function spentUsage(store: JobStore, row: JobRow, opts: ReapOptions): string | null {
  try {
    const spent = opts.spent?.(row, jobDirOf(store.stateDir, row.id)) ?? null;
    return spent ? JSON.stringify(spent) : null;
  } catch (e) {
    // What it spent goes unrecorded; the row still ends.
    log.warn(`job ${row.id}: could not read what its run spent: ${describeError(e)}`);
    return null;
  }
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
  scrubJobDir(row.id, jobDirOf(store.stateDir, row.id));
  try {
    if (store.update(row.id, { ...kept, persist_error: note }, ["running"])) recordJobEnd(store, row.id);
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
        // Redacted before the cut: a key across character 500 would keep its first part.
        persist_error: redact(why).slice(0, 500),
      },
      ["running"],
    );
    action.status = "failed";
    action.reason = why;
  }
  return action;
}
