import { DlError } from "../errors.ts";
import type { EngineContext } from "./engine-options.ts";
import type { Launcher } from "./launch.ts";

export type CancelResult = { id: string; status: string; changed: boolean; note?: string };

/**
 * Dequeues a queued job or stops a running one of this server; it ends `cancelled`
 * with its locks released. Finished jobs are left as they are. A running job of
 * another server is refused: only the server that runs its child can stop it safely.
 */
export async function cancelJob(c: EngineContext, launcher: Launcher, id: string): Promise<CancelResult> {
  const { options, store } = c;
  const row = store.get(id);
  if (!row)
    throw new DlError("not_found", `no ${options.provider.name} job ${id.slice(0, 64)}; check the id with poll`);
  if (row.status === "queued") {
    const changed = store.update(id, { status: "cancelled", ended_at: c.now(), queue_reason: null }, ["queued"]);
    if (changed) return { id, status: "cancelled", changed };
    return cancelJob(c, launcher, id); // it just started or ended: look again
  }
  if (row.status !== "running") return { id, status: row.status, changed: false, note: "already finished" };
  const stopping = launcher.stop(id, "cancel");
  if (!stopping) {
    throw new DlError(
      "busy",
      `job ${id} runs under another server (pid ${row.owner_pid}); cancel it from that session, or run dl reap if that server is gone`,
    );
  }
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
