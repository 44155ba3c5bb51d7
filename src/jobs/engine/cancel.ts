import { DlError } from "../../errors.ts";
import { isTerminal, type JobRow } from "../../store/types.ts";
import type { Launcher } from "./launch.ts";
import type { EngineContext } from "./options.ts";

export type CancelResult = { id: string; status: string; changed: boolean; note?: string };

/** Who is asking: this server, the project it serves, and how to tell a live owner. */
export interface Canceller {
  serverId: string;
  /** The caller's project key (the canonical git common dir, as the per-project caps use). */
  project: string;
  ownerAlive: (row: JobRow) => boolean;
}

/**
 * The one ownership rule for every cancel (cancel_* tools, MCP tasks/cancel): a job may be
 * cancelled by its own server, by a server of its project, or by anyone once its owner is
 * dead. Another live project's job is refused, naming its owner: one project's session
 * must not be able to empty another's queue. Null when the cancel may go ahead.
 */
export function cancelRefusal(row: JobRow, who: Canceller): string | null {
  if (isTerminal(row.status)) return null; // nothing would change
  if (row.server_id === who.serverId || row.project === who.project) return null;
  if (!who.ownerAlive(row)) return null;
  return `job ${row.id} belongs to project ${row.project} (server pid ${row.owner_pid}), not to this session's project ${who.project}; cancel it from a session of that project`;
}

/** A running job only the server that runs its child can stop. */
function stopRefusal(row: JobRow, launcher: Launcher): string | null {
  if (row.status !== "running" || launcher.runs(row.id)) return null;
  return `job ${row.id} runs under another server (pid ${row.owner_pid}); cancel it from that session, or run dl reap if that server is gone`;
}

/**
 * Cancels every job of `ids`, or none: all of them are checked (known, ours to cancel,
 * stoppable here) before the first one changes. A queued job is dequeued, a running one of
 * this server stopped; each ends `cancelled` with its locks released. Finished jobs are
 * left as they are.
 */
export async function cancelJobs(
  c: EngineContext,
  launcher: Launcher,
  ids: readonly string[],
  who: Canceller,
): Promise<CancelResult[]> {
  const rows = ids.map((id) => {
    const row = c.store.get(id);
    if (!row)
      throw new DlError("not_found", `no ${c.options.provider.name} job ${id.slice(0, 64)}; check the id with poll`);
    return row;
  });
  for (const row of rows) {
    const owner = cancelRefusal(row, who);
    if (owner) throw new DlError("not_owner", owner, { owner_project: row.project, owner_pid: row.owner_pid });
    const stop = stopRefusal(row, launcher);
    if (stop) throw new DlError("busy", stop);
  }
  const results: CancelResult[] = [];
  for (const row of rows) results.push(await cancelOne(c, launcher, row.id));
  return results;
}

/** Dequeues or stops one job already checked by cancelJobs. */
async function cancelOne(c: EngineContext, launcher: Launcher, id: string): Promise<CancelResult> {
  const { store } = c;
  const row = store.get(id);
  if (!row) return { id, status: "unknown", changed: false, note: "pruned meanwhile" };
  if (row.status === "queued") {
    const changed = store.update(id, { status: "cancelled", ended_at: c.now(), queue_reason: null }, ["queued"]);
    if (changed) return { id, status: "cancelled", changed };
    return cancelOne(c, launcher, id); // it just started or ended: look again
  }
  if (row.status !== "running") return { id, status: row.status, changed: false, note: "already finished" };
  const stopping = launcher.stop(id, "cancel");
  // Started by another server between the check and now (it was queued then).
  if (!stopping) throw new DlError("busy", stopRefusal(row, launcher) ?? `job ${id} could not be stopped here`);
  await stopping;
  return { id, status: store.get(id)?.status ?? "cancelled", changed: true };
}

/** On shutdown, this server's queued jobs end cancelled (server_stopped): nobody else would start them. */
export function cancelOwnQueued(c: EngineContext): void {
  const { store, serverId } = c;
  for (const r of store.listByStatus(["queued"])) {
    if (r.server_id === serverId)
      store.update(r.id, { status: "cancelled", failure_kind: "server_stopped", ended_at: c.now() }, ["queued"]);
  }
}
