import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import { isTerminal } from "../../store/types.ts";
import type { CancelResult } from "./cancel.ts";
import type { EngineContext } from "./options.ts";

/**
 * Serves `dl cancel` requests for the jobs this server runs: each admission pass, a
 * request for one of our running jobs goes through the engine's own cancel (the path
 * the MCP cancel tools take), and requests for jobs that have ended are dropped. Requests
 * for other servers' jobs are theirs to serve.
 */
export function serveCancelRequests(c: EngineContext, cancel: (id: string) => Promise<CancelResult>): void {
  const { store, serverId } = c;
  for (const id of store.cancelRequests()) {
    const row = store.get(id);
    if (!row || isTerminal(row.status)) {
      store.clearCancelRequest(id);
      continue;
    }
    if (row.server_id !== serverId) continue;
    store.clearCancelRequest(id);
    // Stopping takes the child's grace period: admission goes on meanwhile.
    cancel(id).then(
      (r) => log.info(`${c.options.provider.name} job ${id}: ${r.status} (cancelled from dl cancel)`),
      (e: unknown) =>
        log.warn(`${c.options.provider.name} job ${id}: dl cancel could not be served: ${describeError(e)}`),
    );
  }
}
