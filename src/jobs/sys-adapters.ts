import { createHash } from "node:crypto";
import { join } from "node:path";
import { identity, selfIdentity } from "../sys/identity.ts";
import { groupAlive } from "../sys/process.ts";
import { SlotPool } from "../sys/slots.ts";
import type { Identities, JobLocks, ProcessOwner } from "./engine-ports.ts";

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
