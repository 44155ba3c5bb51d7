import { createHash } from "node:crypto";
import { join } from "node:path";
import { identity, type ProcessIdentity, selfIdentity } from "../../sys/identity.ts";
import { groupAlive } from "../../sys/process.ts";
import { type SlotLease, SlotPool } from "../../sys/slots.ts";

/**
 * What the job engine needs of this machine — cap locks shared by every server on a
 * state dir, process identities, who this server is — as narrow interfaces, so the
 * engine reads as queue logic (tests pass their own), and the one implementation over
 * src/sys (flock slot pools, /proc or ps identities) that every provider's engine uses.
 */

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

const key = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 20);

/**
 * Cap pools as flock slot pools under `<stateDir>/slots`: `global/`, `project-<hash>/`
 * and `workspace-<hash>/` (a pool of one). Every server on the state dir uses the same
 * files, so the kernel enforces the caps across processes and a dead server's slots
 * free themselves; each slot file names the job holding it, for `dl status`.
 */
export function flockJobLocks(stateDir: string): JobLocks {
  const base = join(stateDir, "slots");
  const pools = new Map<string, SlotPool>();
  const pool = (name: string, size: number) => {
    const k = `${name}#${size}`;
    let p = pools.get(k);
    if (!p) {
      p = new SlotPool({ dir: join(base, name), size });
      pools.set(k, p);
    }
    return p;
  };
  return {
    tryGlobal: (size, jobId) => pool("global", size).tryAcquire({ label: jobId }),
    tryProject: (project, size, jobId) => pool(`project-${key(project)}`, size).tryAcquire({ label: jobId }),
    tryWorkspace: (root, jobId) => pool(`workspace-${key(root)}`, 1).tryAcquire({ label: jobId }),
    freeGlobal: (size) => pool("global", size).free(),
  };
}

export const sysIdentities: Identities = {
  read: identity,
  groupAlive,
};

export function selfOwner(): ProcessOwner {
  const me = selfIdentity();
  return { pid: me.pid, startTime: me.startTime };
}
