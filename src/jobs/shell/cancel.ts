import { DlError } from "../../errors.ts";
import { JobStore } from "../../store/jobs.ts";
import { isTerminal, type JobRow } from "../../store/types.ts";
import { jobDirOf } from "../../sys/paths.ts";
import { terminateGroup } from "../../sys/process.ts";
import { type Canceller, type CancelResult, cancelRefusal } from "../engine/cancel.ts";
import { orphanPlan } from "../engine/display-state.ts";
import { scrubJobDir } from "../engine/job-files.ts";
import { jobLiveness } from "../engine/liveness.ts";
import type { Identities } from "../engine/machine.ts";
import type { FoundJob } from "./job-finder.ts";

export type ShellCancelOptions = {
  /** The project of the folder dl cancel runs in (resolveWorkspace's key). */
  callerProject: string;
  identities: Identities;
  now: () => number;
  /** How long to wait for a live server to stop its job. */
  waitMs: number;
  graceMs: number;
};

/**
 * `dl cancel` of one job. A queued job is dequeued as the engine does; a running job of a
 * live server is handed to that server (a cancel request its admission loop serves with
 * the engine's own cancel, the MCP tools' path), since only it can stop its child and
 * release its slots safely; an orphan's verified child is stopped here. Another project's
 * live job is refused (cancel-owner.ts).
 */
export async function cancelFromShell(j: FoundJob, o: ShellCancelOptions): Promise<CancelResult> {
  const store = JobStore.open(j.store.stateDir, { provider: j.store.provider });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = store.get(j.row.id);
      if (!row) throw new DlError("not_found", `job ${j.row.id} was pruned while cancelling it`);
      const r = await cancelOnce(store, row, o);
      if (r) return r;
    }
    const row = store.get(j.row.id);
    return {
      id: j.row.id,
      status: row?.status ?? "unknown",
      changed: false,
      note: "its status kept changing; look again with dl show",
    };
  } finally {
    store.close();
  }
}

/** One attempt; null when the row changed under us (look again). */
async function cancelOnce(store: JobStore, row: JobRow, o: ShellCancelOptions): Promise<CancelResult | null> {
  if (isTerminal(row.status)) return { id: row.id, status: row.status, changed: false, note: "already finished" };
  const live = jobLiveness(row, o.identities);
  // The engine's one ownership rule; a shell is no server, so only project and liveness count.
  const refused = cancelRefusal(row, shellCanceller(o.callerProject, live.owner));
  if (refused) throw new DlError("not_owner", refused, { owner_project: row.project, owner_pid: row.owner_pid });
  const ended = { status: "cancelled" as const, ended_at: o.now(), queue_reason: null };
  if (row.status === "queued")
    return store.update(row.id, ended, ["queued"]) ? { id: row.id, status: "cancelled", changed: true } : null;
  if (live.owner) return askOwner(store, row, o);
  const plan = orphanPlan(row, live).plan;
  if (plan.kills) await terminateGroup(row.child_pgid!, o.graceMs);
  // Its supervisor died before it could check what the child left: done here instead,
  // before the row reads cancelled (a reader may look the moment it ends).
  scrubJobDir(row.id, jobDirOf(store.stateDir, row.id));
  if (!store.update(row.id, { ...ended, failure_kind: null }, ["running"])) return null;
  const note = plan.kills
    ? "its server had died; its child was stopped"
    : "its server had died; nothing was left running";
  return { id: row.id, status: "cancelled", changed: true, note };
}

/** Asks the live owner to cancel, then waits for the row to end (bounded). */
async function askOwner(store: JobStore, row: JobRow, o: ShellCancelOptions): Promise<CancelResult> {
  store.requestCancel(row.id, o.now());
  const deadline = o.now() + o.waitMs;
  for (let pause = 20; o.now() < deadline; pause = Math.min(pause * 2, 200)) {
    const now = store.get(row.id);
    if (!now || isTerminal(now.status)) return { id: row.id, status: now?.status ?? "cancelled", changed: true };
    await Bun.sleep(pause);
  }
  return {
    id: row.id,
    status: row.status,
    changed: false,
    note: `asked its server (pid ${row.owner_pid}) to stop it; it has not ended yet (dl wait ${row.id})`,
  };
}

/** The shell as a Canceller of cancel.ts's rule: no server of its own, the folder's project. */
export function shellCanceller(project: string, ownerAlive: boolean): Canceller {
  return { serverId: "", project, ownerAlive: () => ownerAlive };
}
