import { JobStore } from "../../src/store/jobs.ts";
import { until } from "./until.ts";

/**
 * The pid of the supervisor that runs job `id` (its row's owner once adopted, another
 * process than the server that queued it), read from the store as any process could.
 */
export function supervisorOf(stateDir: string, id: string): number {
  const store = JobStore.open(stateDir, { readonly: true });
  try {
    const row = store.get(id);
    if (!row || row.owner_pid === null) throw new Error(`job ${id} has no owner yet`);
    if (row.owner_pid === row.origin_pid) throw new Error(`job ${id} is still owned by the server that queued it`);
    return row.owner_pid;
  } finally {
    store.close();
  }
}

/**
 * Waits until job `id`'s row names its child (pid, start time, command line): from then a
 * later server or `dl reap` can verify the child and stop it. A child can reach its model
 * or write its first line before its supervisor has recorded it, so a test that kills the
 * supervisor and expects the orphan stopped (killed_on_restart) waits for this first.
 */
export function childRecorded(stateDir: string, id: string): Promise<true> {
  return until(() => {
    const store = JobStore.open(stateDir, { readonly: true });
    try {
      return store.get(id)?.child_pid != null || null;
    } finally {
      store.close();
    }
  }, `job ${id}'s supervisor to record its child`);
}
