import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { tryLock } from "../sys/flock.ts";
import { identity, selfIdentity } from "../sys/identity.ts";
import type { HeldLock, Identities, JobLocks } from "./deps.ts";

const key = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 20);

/**
 * Cap pools as flock'd files under `<stateDir>/slots`: `global/<i>.lock`,
 * `project-<hash>/<i>.lock`, `workspace/<hash>.lock`. Every server on the state dir
 * uses the same files, so the kernel enforces the caps across processes, and a dead
 * server's slots free themselves.
 */
export function flockJobLocks(stateDir: string): JobLocks {
  const base = join(stateDir, "slots");
  const dir = (name: string) => {
    const d = join(base, name);
    mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  };
  const pool = (d: string, size: number): HeldLock | null => {
    for (let i = 0; i < size; i++) {
      const h = tryLock(join(d, `${i}.lock`));
      if (h) return h;
    }
    return null;
  };
  return {
    tryGlobal: (size) => pool(dir("global"), size),
    tryProject: (project, size) => pool(dir(`project-${key(project)}`), size),
    tryWorkspace: (root) => tryLock(join(dir("workspace"), `${key(root)}.lock`)),
    freeGlobal: (size) => {
      const d = dir("global");
      let free = 0;
      for (let i = 0; i < size; i++) {
        const h = tryLock(join(d, `${i}.lock`));
        if (h) {
          free++;
          h.release();
        }
      }
      return free;
    },
  };
}

export const sysIdentities: Identities = {
  read(pid) {
    const id = identity(pid);
    return id ? { pid: id.pid, start: id.startTime, command: id.command } : null;
  },
};

export function selfOwner(): { pid: number; start: string } {
  const me = selfIdentity();
  return { pid: me.pid, start: me.startTime };
}
