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
  // The server that queued it (its origin) still counts as its own once a supervisor runs it.
  if (row.server_id === who.serverId || row.origin_id === who.serverId || row.project === who.project) return null;
  if (!who.ownerAlive(row)) return null;
  return `job ${row.id} belongs to project ${row.project} (server pid ${row.owner_pid}), not to this session's project ${who.project}; cancel it from a session of that project`;
}

/**
 * A running job is stopped by the process that runs it: this engine, or the job's own
 * supervisor (or another server), asked through a cancel request. One whose runner is
 * gone is an orphan for dl reap.
 */
function stopRefusal(row: JobRow, launcher: Launcher, who: Canceller): string | null {
  if (row.status !== "running" || launcher.runs(row.id) || who.ownerAlive(row)) return null;
  return `job ${row.id} was run by a process that is gone (pid ${row.owner_pid}); run dl reap to end it`;
}

/** How long a cancel waits for another process to stop the job it runs (its grace, then some). */
const ASK_WAIT_MS = 15_000;

/** Asks the live process that runs the job to cancel it (its admission serves the request), then waits for its end. */
async function askRunner(c: EngineContext, row: JobRow): Promise<CancelResult> {
  c.store.requestCancel(row.id, c.now());
  const deadline = performance.now() + ASK_WAIT_MS + (c.options.graceMs ?? 5000);
  for (let pause = 20; performance.now() < deadline; pause = Math.min(pause * 2, 200)) {
    const now = c.store.get(row.id);
    if (!now || isTerminal(now.status)) return { id: row.id, status: now?.status ?? "cancelled", changed: true };
    await Bun.sleep(pause);
  }
  const note = `asked its supervisor (pid ${row.owner_pid}) to stop it; it has not ended yet (dl wait ${row.id})`;
  return { id: row.id, status: row.status, changed: false, note };
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
    const stop = stopRefusal(row, launcher, who);
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
  // Run by its supervisor (or another server): ask it.
  if (!stopping) return askRunner(c, row);
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
