/**
 * The narrow views of src/sys the engine needs. Kept as interfaces so the engine reads
 * as queue logic, and so the sys adapters (sys-adapters.ts) are the only place that
 * knows the lock and identity APIs.
 */

import type { ProcessIdentity } from "../sys/identity.ts";
import type { SlotLease } from "../sys/slots.ts";

/** Cap pools shared by every server on one state dir. */
export interface JobLocks {
  /** Any free slot of the global pool of `size` for job `jobId`, or null when all are held. */
  tryGlobal(size: number, jobId: string): SlotLease | null;
  /** Any free slot of this project's pool of `size`, or null. */
  tryProject(project: string, size: number, jobId: string): SlotLease | null;
  /** The single lock of one checkout/worktree root, or null if another job holds it. */
  tryWorkspace(root: string, jobId: string): SlotLease | null;
  /** How many global slots nobody holds right now (for the queue bound). */
  freeGlobal(size: number): number;
}

/** Who this server is to other processes: enough to tell a reused pid apart. */
export type ProcessOwner = Pick<ProcessIdentity, "pid" | "startTime">;

export interface Identities {
  /** The identity of a live pid, or null if there is no such process. */
  read(pid: number): ProcessIdentity | null;
  /** Whether any process is still in process group `pgid` (absent: never assumed). */
  groupAlive?(pgid: number): boolean;
}
