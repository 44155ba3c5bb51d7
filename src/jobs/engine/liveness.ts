import type { JobRow } from "../../store/types.ts";
import { sameSessionLeader } from "../../sys/identity.ts";
import type { Identities } from "./machine.ts";

/** True when the row's owning server is still the same live process. */
export function ownerAlive(row: Pick<JobRow, "owner_pid" | "owner_start">, ids: Identities): boolean {
  if (row.owner_pid === null) return false;
  const now = ids.read(row.owner_pid);
  if (!now) return false;
  return row.owner_start === null || now.startTime === row.owner_start;
}

/**
 * Whether the recorded child still runs, and as what: "leader" when it is the very
 * process we started (same pid and start time, still leading the group and session dl
 * made for it; exec keeps both, so the npm Codex wrapper that became `node …` after the
 * row recorded `/usr/bin/env node …` still matches), "survivors" when the leader is gone
 * but members of its group remain, null when nothing verified is left. A pid the OS
 * reused for something else has another start time and leads no such group.
 */
export type ChildLiveness = "leader" | "survivors" | null;

export function childVerified(row: JobRow, ids: Identities): ChildLiveness {
  if (row.child_pid === null || row.child_pgid === null || row.child_start === null) return null;
  // dl starts every child with setsid: a row naming another group was not written by us.
  if (row.child_pgid !== row.child_pid) return null;
  const now = ids.read(row.child_pid);
  if (now) return sameSessionLeader({ pid: row.child_pid, startTime: row.child_start }, now) ? "leader" : null;
  // The leader is gone. The OS gives no process a pid that is still the number of a
  // process group with members, so members of group child_pgid can only be the rest of
  // the group dl created (a jail's inner process, a CLI's helpers): they are ours to stop.
  return ids.groupAlive?.(row.child_pgid) ? "survivors" : null;
}

/** What a job's reading needs to know beyond its row: is its server alive, and its child? */
export type Liveness = { owner: boolean; child: ChildLiveness };

/** The liveness of an active row (a finished row needs none: its row is the record). */
export function jobLiveness(row: JobRow, ids: Identities, selfServerId?: string): Liveness {
  if (row.status !== "queued" && row.status !== "running") return { owner: true, child: null };
  const owner = (selfServerId !== undefined && row.server_id === selfServerId) || ownerAlive(row, ids);
  // A live owner answers for its child; only an orphan's child is looked at.
  return { owner, child: owner || row.status !== "running" ? null : childVerified(row, ids) };
}

/**
 * Whether the window an active job came from (the server that took its call) is still
 * open: "closed" once that server is gone while its supervisor runs the job on; null for
 * a finished job or a row from before origins were kept.
 */
export function jobWindow(row: JobRow, ids: Identities): "open" | "closed" | null {
  if ((row.status !== "queued" && row.status !== "running") || row.origin_pid === null) return null;
  return ownerAlive({ owner_pid: row.origin_pid, owner_start: row.origin_start }, ids) ? "open" : "closed";
}

/**
 * A job's row and liveness, read in the one order that cannot misjudge a job whose owner
 * records its end and exits (a supervisor always does, the moment its job ends): when the
 * owner looks dead, the row is read again after that look. Still active under the same
 * owner, it is an orphan; ended (or taken over) meanwhile, the new row is the truth.
 */
export function settledLiveness(
  row: JobRow,
  live: Liveness,
  reread: () => JobRow | undefined,
  liveness: (r: JobRow) => Liveness,
): { row: JobRow; live: Liveness } {
  if (live.owner || (row.status !== "queued" && row.status !== "running")) return { row, live };
  const now = reread();
  if (!now || (now.status === row.status && now.owner_pid === row.owner_pid)) return { row, live };
  return { row: now, live: liveness(now) };
}
