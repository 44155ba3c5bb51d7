import type { JobRow, QueueReason } from "../../store/types.ts";

/**
 * Pure FIFO admission planning over the shared queue. Every server computes the same
 * plan from the same rows; each then launches only its own admissible jobs. An older
 * admissible job of another server reserves its slot in the plan, so a younger job
 * never jumps it while slots are short.
 */

export interface PlanInput {
  /** queued + running rows of every server, oldest first. */
  rows: readonly JobRow[];
  now: number;
  globalCap: number;
  /** The configured cap; when globalCap is lower, a full pool reads `adaptive_cap`. */
  configuredGlobalCap: number;
  perProjectCap: number;
  /** The configured per-project cap; when perProjectCap is lower, a full project reads `adaptive_cap`. */
  configuredPerProjectCap?: number;
  /** Account-wide reason nothing may start (throttle cooldown, auth failure), or null. */
  gate: QueueReason | null;
  /**
   * Owners (by `${pid}:${start}`) known alive. Queued rows of dead owners are skipped;
   * their running rows still count (an orphan child may still run) until the engine
   * reaps them, which it does as soon as such a row holds back one of its jobs.
   */
  ownerAlive: (row: JobRow) => boolean;
}

export interface PlanEntry {
  row: JobRow;
  /** null: admissible now. Otherwise why it waits. */
  reason: QueueReason | null;
}

export function planAdmission(p: PlanInput): PlanEntry[] {
  let usedGlobal = 0;
  const usedProject = new Map<string, number>();
  const busyRoots = new Set<string>();
  for (const r of p.rows) {
    if (r.status !== "running") continue;
    usedGlobal++;
    usedProject.set(r.project, (usedProject.get(r.project) ?? 0) + 1);
    busyRoots.add(r.workspace_root);
  }
  const plan: PlanEntry[] = [];
  for (const r of p.rows) {
    if (r.status !== "queued" || !p.ownerAlive(r)) continue;
    let reason: QueueReason | null = null;
    if (r.retry_at !== null && r.retry_at > p.now) reason = "throttle_cooldown";
    else if (p.gate) reason = p.gate;
    else if (busyRoots.has(r.workspace_root)) reason = "workspace_busy";
    else if (usedGlobal >= p.globalCap)
      reason =
        p.globalCap < p.configuredGlobalCap && usedGlobal < p.configuredGlobalCap ? "adaptive_cap" : "global_cap";
    else if ((usedProject.get(r.project) ?? 0) >= p.perProjectCap) {
      const used = usedProject.get(r.project) ?? 0;
      reason =
        p.perProjectCap < (p.configuredPerProjectCap ?? p.perProjectCap) && used < (p.configuredPerProjectCap ?? 0)
          ? "adaptive_cap"
          : "waiting_for_slot";
    }
    if (reason === null) {
      usedGlobal++;
      usedProject.set(r.project, (usedProject.get(r.project) ?? 0) + 1);
      busyRoots.add(r.workspace_root);
    } else if (reason === "workspace_busy" || reason === "waiting_for_slot" || reason === "global_cap") {
      // A waiting job still holds its place for its root: a younger job on the same
      // checkout must not overtake it.
      busyRoots.add(r.workspace_root);
    }
    plan.push({ row: r, reason });
  }
  return plan;
}
