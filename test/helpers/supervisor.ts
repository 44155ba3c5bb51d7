import { JobStore } from "../../src/store/jobs.ts";

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
