import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import type { JobRow, QueueReason } from "../../store/types.ts";
import { planAdmission } from "./admission.ts";
import { cancelJobs } from "./cancel.ts";
import { serveCancelRequests } from "./cancel-requests.ts";
import type { Launcher } from "./launch.ts";
import type { LiveReaper } from "./live-reap.ts";
import { ownerAlive } from "./liveness.ts";
import type { EngineContext } from "./options.ts";

/** Reasons a dead server's running rows can cause: they count toward these caps until reaped. */
const CAP_REASONS: ReadonlySet<QueueReason> = new Set([
  "global_cap",
  "adaptive_cap",
  "workspace_busy",
  "waiting_for_slot",
]);

/**
 * The engine's admission loop: one pass at a time, re-run at once when something asks
 * for it mid-pass (a submit, a job's end), otherwise on a timer. Each pass plans over
 * every server's rows (the shared queue) but launches only this server's jobs, and
 * records on each waiting row why it waits, so poll and status can say so.
 */
export class AdmissionLoop {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ticking = false;
  /** Something asked for a pass while one ran: run the next one at once. */
  private again = false;
  private halted = false;

  constructor(
    private readonly c: EngineContext,
    private readonly launcher: Launcher,
    private readonly reaper: LiveReaper,
  ) {}

  /** True once halt() ran: no more passes, and submit refuses. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Asks for a pass in `ms` (a running pass makes it happen right after). */
  schedule(ms: number): void {
    if (this.halted) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  /** No further passes; a pass in flight still finishes. */
  halt(): void {
    this.halted = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    this.ticking = true;
    this.again = false;
    let next = this.c.options.tickMs ?? 250;
    try {
      // A dead server's running rows hold the caps in the plan (its orphan child may still
      // run): end them first, so the slots they freed are used by live servers' jobs.
      if (this.reaper.due()) await this.reaper.reapDead();
      if (this.halted) return;
      serveCancelRequests(this.c, (id) => this.cancelOwn(id));
      next = Math.min(next, this.admit());
      next = Math.min(next, this.reaper.wakeInMs());
    } catch (e) {
      log.warn(`${this.c.options.provider.name} admission failed: ${describeError(e)}`);
    } finally {
      this.ticking = false;
    }
    if (this.again) next = 0;
    this.schedule(next);
  }

  /** One admission pass; returns how soon to look again. */
  private admit(): number {
    const { options, store, serverId } = this.c;
    const now = this.c.now();
    const rows = store.listActive();
    const owners = new Map<string, boolean>();
    const alive = (r: JobRow) => {
      if (r.server_id === serverId) return true;
      const k = `${r.owner_pid}:${r.owner_start}`;
      const known = owners.get(k);
      if (known !== undefined) return known;
      const v = ownerAlive(r, options.identities);
      owners.set(k, v);
      return v;
    };
    const cap = Math.min(options.maxConcurrent, options.effectiveCap?.() ?? options.maxConcurrent);
    const projectCap = Math.min(options.maxPerProject, cap, options.effectiveProjectCap?.() ?? options.maxPerProject);
    const plan = planAdmission({
      rows,
      now,
      globalCap: cap,
      configuredGlobalCap: options.maxConcurrent,
      perProjectCap: projectCap,
      configuredPerProjectCap: options.maxPerProject,
      gate: options.gate?.() ?? null,
      ownerAlive: alive,
    });
    let next = Infinity;
    let admissibleSeen = false;
    let blocked = false;
    for (const { row, reason } of plan) {
      // With a stagger only one launch fits in each window: it goes to the oldest
      // admissible job (whichever server owns it), so launches keep submit order.
      const turn = reason === null && (options.staggerMs <= 0 || !admissibleSeen);
      if (reason === null) admissibleSeen = true;
      if (row.server_id !== serverId) continue;
      let why = reason ?? (turn ? null : "waiting_for_slot");
      if (why === null) {
        const r = this.launcher.launch(row, now, cap, projectCap);
        if (r === "started") continue;
        why = r.reason;
        if (r.retryMs !== undefined) next = Math.min(next, r.retryMs);
      }
      if (CAP_REASONS.has(why)) blocked = true;
      if (why === "throttle_cooldown" && row.retry_at !== null) next = Math.min(next, row.retry_at - now);
      if (row.queue_reason !== why) store.update(row.id, { queue_reason: why }, ["queued"]);
    }
    // The plan asked about queued rows' owners; ask about running rows' too (cached per owner).
    this.reaper.observe(rows.some((r) => !alive(r)) ? { blocked } : null);
    return Math.max(0, next);
  }

  /** A dl cancel request for a job this server runs: the engine's own cancel, as its server (the rule passes). */
  private async cancelOwn(id: string) {
    const self = { serverId: this.c.serverId, project: "", ownerAlive: () => true };
    const [r] = await cancelJobs(this.c, this.launcher, [id], self);
    return r!;
  }
}
