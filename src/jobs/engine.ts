import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { DlError, describeError } from "../errors.ts";
import { log } from "../log.ts";
import { JobStore } from "../store/jobs.ts";
import { isTerminal, type JobRow, type NewJob, type QueueReason } from "../store/types.ts";
import { planAdmission } from "./admission.ts";
import type { HeldLock, Identities, JobLocks } from "./deps.ts";
import { pollView, unknownView, type PollView } from "./poll.ts";
import type { Provider } from "./provider.ts";
import { ownerAlive, reapDeadOwners, type ReapAction } from "./reaper.ts";
import { runJob, type StopReason } from "./runner.ts";
import { checkWorkdir, resolveWorkspace, type WorkspaceGuards } from "./workspace.ts";

export interface EngineOptions {
  provider: Provider;
  /** This provider's state dir: jobs.sqlite, slot files and per-job dirs live here. */
  stateDir: string;
  maxConcurrent: number;
  maxPerProject: number;
  /** Jobs allowed to wait beyond the slots that are free right now. */
  maxQueue: number;
  /** Minimum gap between two launches by any server on this state dir. */
  staggerMs: number;
  guards: WorkspaceGuards;
  locks: JobLocks;
  identities: Identities;
  /** This server as other processes see it. */
  self: { pid: number; start: string };
  /** The watcher command printed in `watch` (default "dl wait"). */
  waitCommand?: string;
  /** Admission re-check period when nothing wakes the loop (default 250 ms). */
  tickMs?: number;
  graceMs?: number;
  outputCap?: number;
  maxRetries?: number;
  retryDelayMs?: (n: number) => number;
  now?: () => number;
  /** Account-wide reason nothing may start now (provider hooks: cooldown, auth). */
  gate?: () => QueueReason | null;
  /** A lowered global cap (adaptive, after throttles), or null for maxConcurrent. */
  effectiveCap?: () => number | null;
  /**
   * How often admission ends a dead server's rows when none of our jobs waits on a cap
   * (default 5000 ms). While one does, it reaps at once (at most every REAP_BLOCKED_MS).
   */
  reapEveryMs?: number;
}

export interface SubmitResult {
  jobs: { id: string; status: "queued"; workdir: string; project: string; warnings: string[] }[];
  watch: string;
  watch_hint: string;
}

export type CancelResult = { id: string; status: string; changed: boolean; note?: string };

interface Active {
  abort: AbortController;
  done: Promise<void>;
  locks: HeldLock[];
}

const BACKOFF_S = [5, 10, 20, 40, 60];
/** Floor between two reaps while our jobs wait on caps (a reap that cannot end a row must not spin). */
const REAP_BLOCKED_MS = 250;
/** Reasons a dead server's running rows can cause: they count toward these caps until reaped. */
const CAP_REASONS: ReadonlySet<QueueReason> = new Set(["global_cap", "adaptive_cap", "workspace_busy", "waiting_for_slot"]);
/** Lock errors (not contention) a job meets before it is recorded failed. */
const MAX_LOCK_ERRORS = 3;

/**
 * One provider's job engine inside one server process. Several servers share a state
 * dir: the SQLite rows are the common queue and record, the flock slots are the caps.
 */
export class JobEngine {
  readonly serverId = `srv-${randomBytes(4).toString("hex")}`;
  private readonly store: JobStore;
  private readonly active = new Map<string, Active>();
  private readonly persistErrors = new Map<string, string>();
  private readonly now: () => number;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ticking = false;
  private again = false;
  private stopped = false;
  /** A dead owner's row was seen by the last admission pass; `blocked`: one of ours waits on a cap. */
  private dead: { blocked: boolean } | null = null;
  private lastReap = 0;
  private reaping: Promise<void> | null = null;
  private readonly lockErrors = new Map<string, number>();

  private constructor(private readonly o: EngineOptions) {
    if (!(o.maxPerProject > 0 && o.maxPerProject <= o.maxConcurrent)) {
      throw new DlError("bad_config", `per-project cap ${o.maxPerProject} must be > 0 and <= the global cap ${o.maxConcurrent}`);
    }
    this.now = o.now ?? Date.now;
    // Fails closed: an unwritable state dir throws DlError "storage" and no engine exists.
    this.store = JobStore.open(o.stateDir);
  }

  /** Opens the store, reaps the rows of dead servers, starts admitting. */
  static async start(o: EngineOptions): Promise<{ engine: JobEngine; reaped: ReapAction[] }> {
    const engine = new JobEngine(o);
    const reaped = await reapDeadOwners(engine.store, { identities: o.identities, now: engine.now, selfServerId: engine.serverId, graceMs: o.graceMs });
    for (const a of reaped) log.info(`${o.provider.name} job ${a.id}: ${a.status} (${a.reason})`);
    engine.schedule(0);
    return { engine, reaped };
  }

  get provider(): Provider {
    return this.o.provider;
  }

  /** Validates every task, then records all of them or none. Returns at once. */
  async submit(rawTasks: readonly unknown[]): Promise<SubmitResult> {
    if (this.stopped) throw new DlError("busy", "this server is shutting down; submit again from a live session");
    if (rawTasks.length === 0) throw new DlError("bad_input", "tasks is empty; pass at least one task");
    const p = this.o.provider;
    const prepared: NewJob[] = [];
    const views: SubmitResult["jobs"] = [];
    for (const [i, raw] of rawTasks.entries()) {
      try {
        const t = p.validate(raw);
        const workdir = checkWorkdir(t.workdir, this.o.guards);
        const ws = await resolveWorkspace(workdir, this.o.guards.toolEnv);
        const id = `${p.idPrefix}${randomBytes(5).toString("hex")}`;
        prepared.push({
          id,
          provider: p.name,
          project: ws.project,
          workdir: ws.workdir,
          workspace_root: ws.root,
          task: t.task,
          model: t.model,
          effort: t.effort,
          params: JSON.stringify(t.params),
          timeout_s: t.timeoutS,
          owner_pid: this.o.self.pid,
          owner_start: this.o.self.start,
          server_id: this.serverId,
          created_at: this.now(),
          warnings: t.warnings.length ? JSON.stringify(t.warnings) : null,
        });
        views.push({ id, status: "queued", workdir: ws.workdir, project: ws.project, warnings: t.warnings });
      } catch (e) {
        if (e instanceof DlError) throw new DlError(e.code, `task ${i + 1}: ${e.message} (nothing was started)`, { ...e.data, index: i });
        throw e;
      }
    }
    // A dead server's queued rows must not fill the bound: end them first.
    if (this.hasDeadRows()) await this.reapDead();
    const free = this.o.locks.freeGlobal(this.o.maxConcurrent);
    this.store.insertMany(prepared, (queued) => {
      const waiting = queued + prepared.length - free;
      if (waiting > this.o.maxQueue) {
        throw new DlError(
          "busy",
          `the ${p.name} queue is full (${queued} queued, ${free} slots free, bound ${this.o.maxQueue}); nothing was started — wait for jobs to end (dl wait) and submit again`,
        );
      }
    });
    this.schedule(0);
    const ids = views.map((v) => v.id);
    const watch = `${this.o.waitCommand ?? "dl wait"} ${ids.join(" ")}`;
    return {
      jobs: views,
      watch,
      watch_hint: `Start \`${watch}\` now in the background (Bash run_in_background or the Monitor tool): it prints one line as each job ends and is the only completion signal.`,
    };
  }

  /** Snapshots of jobs by id, including other servers' (read-only); unknown ids say so. */
  poll(ids: readonly string[]): (PollView | ReturnType<typeof unknownView>)[] {
    const rows = new Map(this.store.getMany(ids).map((r) => [r.id, r]));
    const now = this.now();
    return ids.map((id) => {
      const r = rows.get(id);
      if (!r) return unknownView(id);
      const alive = r.server_id === this.serverId || ownerAlive(r, this.o.identities);
      return pollView(r, now, alive, this.serverId, this.persistErrors.get(id));
    });
  }

  /** The raw row (tests, status). */
  row(id: string): JobRow | undefined {
    return this.store.get(id);
  }

  /** Recent jobs of every server, newest first (for status). */
  list(limit = 50): PollView[] {
    const now = this.now();
    return this.store.listRecent(limit).map((r) => pollView(r, now, r.server_id === this.serverId || ownerAlive(r, this.o.identities), this.serverId));
  }

  /**
   * Dequeues a queued job or stops a running one of this server; it ends `cancelled`
   * with its locks released. Finished jobs are left as they are.
   */
  async cancel(id: string): Promise<CancelResult> {
    const row = this.store.get(id);
    if (!row) throw new DlError("not_found", `no ${this.o.provider.name} job ${id.slice(0, 64)}; check the id with poll`);
    if (row.status === "queued") {
      const changed = this.store.update(id, { status: "cancelled", ended_at: this.now(), queue_reason: null }, ["queued"]);
      if (changed) return { id, status: "cancelled", changed };
      return this.cancel(id); // it just started or ended: look again
    }
    if (row.status !== "running") return { id, status: row.status, changed: false, note: "already finished" };
    const mine = this.active.get(id);
    if (!mine) {
      throw new DlError("busy", `job ${id} runs under another server (pid ${row.owner_pid}); cancel it from that session, or run dl reap if that server is gone`);
    }
    mine.abort.abort("cancel" satisfies StopReason);
    await mine.done;
    return { id, status: this.store.get(id)?.status ?? "cancelled", changed: true };
  }

  /** Graceful stop: queued jobs of this server are cancelled, running ones killed and recorded. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.reaping;
    for (const r of this.store.listByStatus(["queued"])) {
      if (r.server_id === this.serverId) this.store.update(r.id, { status: "cancelled", failure_kind: "server_stopped", ended_at: this.now() }, ["queued"]);
    }
    const all = [...this.active.values()];
    for (const a of all) a.abort.abort("shutdown" satisfies StopReason);
    await Promise.all(all.map((a) => a.done));
    this.store.close();
  }

  /** Ends rows of dead servers now (what `dl reap` does from outside). */
  reap(dryRun = false): Promise<ReapAction[]> {
    return reapDeadOwners(this.store, { identities: this.o.identities, now: this.now, selfServerId: this.serverId, dryRun, graceMs: this.o.graceMs });
  }

  /** Number of children this server runs right now. */
  get runningHere(): number {
    return this.active.size;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    this.ticking = true;
    this.again = false;
    let next = this.o.tickMs ?? 250;
    try {
      // A dead server's running rows hold the caps in the plan (its orphan child may still
      // run): end them first, so the slots they freed are used by live servers' jobs.
      if (this.reapDue()) await this.reapDead();
      if (this.stopped) return;
      next = Math.min(next, this.admit());
      if (this.dead?.blocked) next = Math.min(next, Math.max(0, this.lastReap + REAP_BLOCKED_MS - this.now()));
    } catch (e) {
      log.warn(`${this.o.provider.name} admission failed: ${describeError(e)}`);
    } finally {
      this.ticking = false;
    }
    if (this.again) next = 0;
    this.schedule(next);
  }

  /** One admission pass; returns how soon to look again. */
  private admit(): number {
    const now = this.now();
    const rows = this.store.listActive();
    const owners = new Map<string, boolean>();
    const alive = (r: JobRow) => {
      if (r.server_id === this.serverId) return true;
      const k = `${r.owner_pid}:${r.owner_start}`;
      let v = owners.get(k);
      if (v === undefined) owners.set(k, (v = ownerAlive(r, this.o.identities)));
      return v;
    };
    const cap = Math.min(this.o.maxConcurrent, this.o.effectiveCap?.() ?? this.o.maxConcurrent);
    const plan = planAdmission({
      rows,
      now,
      globalCap: cap,
      configuredGlobalCap: this.o.maxConcurrent,
      perProjectCap: this.o.maxPerProject,
      gate: this.o.gate?.() ?? null,
      ownerAlive: alive,
    });
    let next = Infinity;
    let admissibleSeen = false;
    let blocked = false;
    for (const { row, reason } of plan) {
      // With a stagger only one launch fits in each window: it goes to the oldest
      // admissible job (whichever server owns it), so launches keep submit order.
      const turn = reason === null && (this.o.staggerMs <= 0 || !admissibleSeen);
      if (reason === null) admissibleSeen = true;
      if (row.server_id !== this.serverId) continue;
      let why = reason ?? (turn ? null : "waiting_for_slot");
      if (why === null) {
        const r = this.launch(row, now, cap);
        if (r === "started") continue;
        why = r.reason;
        if (r.retryMs !== undefined) next = Math.min(next, r.retryMs);
      }
      if (CAP_REASONS.has(why)) blocked = true;
      if (why === "throttle_cooldown" && row.retry_at !== null) next = Math.min(next, row.retry_at - now);
      if (row.queue_reason !== why) this.store.update(row.id, { queue_reason: why }, ["queued"]);
    }
    // The plan asked about queued rows' owners; ask about running rows' too (cached per owner).
    this.dead = rows.some((r) => !alive(r)) ? { blocked } : null;
    return Math.max(0, next);
  }

  /** Whether the last pass saw a dead owner's row and the throttle lets us reap now. */
  private reapDue(): boolean {
    if (!this.dead) return false;
    const gap = this.dead.blocked ? REAP_BLOCKED_MS : (this.o.reapEveryMs ?? 5000);
    return this.now() - this.lastReap >= gap;
  }

  private hasDeadRows(): boolean {
    return this.store.listActive().some((r) => r.server_id !== this.serverId && !ownerAlive(r, this.o.identities));
  }

  /**
   * Ends dead servers' rows (verified orphans killed → killed_on_restart, the rest lost),
   * as JobEngine.start and `dl reap` do. One reap at a time; callers share it.
   */
  private reapDead(): Promise<void> {
    this.reaping ??= (async () => {
      try {
        const done = await this.reap();
        for (const a of done) log.info(`${this.o.provider.name} job ${a.id}: ${a.status} (${a.reason})`);
      } catch (e) {
        log.warn(`${this.o.provider.name}: ending dead servers' jobs failed: ${describeError(e)}`);
      } finally {
        this.lastReap = this.now();
        this.dead = null;
        this.reaping = null;
      }
    })();
    return this.reaping;
  }

  /** Takes the locks and the stagger claim, then runs the job in the background. */
  private launch(row: JobRow, now: number, cap: number): "started" | { reason: QueueReason; retryMs?: number } {
    const held: HeldLock[] = [];
    const release = () => held.splice(0).forEach((h) => h.release());
    let taken: "started" | { reason: QueueReason; retryMs?: number };
    try {
      taken = this.takeSlots(row, cap, held);
    } catch (e) {
      // Whatever was taken before the throw goes back, or that checkout and slot stay
      // busy for every server until this one exits.
      release();
      return this.lockFailed(row, e);
    }
    if (taken !== "started") {
      release();
      return taken;
    }
    this.lockErrors.delete(row.id);
    let claim;
    try {
      claim = this.store.claimLaunch(row.id, { started_at: now, last_activity_at: now }, now, this.o.staggerMs);
    } catch (e) {
      release();
      throw e;
    }
    if (!claim.ok) {
      release();
      return "waitMs" in claim ? { reason: "waiting_for_slot", retryMs: claim.waitMs } : { reason: "waiting_for_slot", retryMs: 0 };
    }
    const abort = new AbortController();
    const started: JobRow = { ...row, status: "running", started_at: now, last_activity_at: now };
    const done = runJob(started, this.runnerContext(), abort.signal)
      .catch((e) => log.error(`${this.o.provider.name} job ${row.id}: ${describeError(e)}`))
      .finally(() => {
        release();
        this.active.delete(row.id);
        this.forgetPersistError(row.id);
        this.schedule(0);
      });
    this.active.set(row.id, { abort, done, locks: held });
    return "started";
  }

  /** Workspace, global and project slots in that order, pushed onto `held` as taken. */
  private takeSlots(row: JobRow, cap: number, held: HeldLock[]): "started" | { reason: QueueReason } {
    const l = this.o.locks;
    const ws = l.tryWorkspace(row.workspace_root, row.id);
    if (!ws) return { reason: "workspace_busy" };
    held.push(ws);
    const g = l.tryGlobal(cap, row.id);
    if (!g) return { reason: cap < this.o.maxConcurrent ? "adaptive_cap" : "global_cap" };
    held.push(g);
    const pr = l.tryProject(row.project, this.o.maxPerProject, row.id);
    if (!pr) return { reason: "waiting_for_slot" };
    held.push(pr);
    return "started";
  }

  /**
   * A lock call failed (EMFILE, an unwritable or symlinked slot file), which is not
   * contention. A passing fault is retried on later passes; after MAX_LOCK_ERRORS the
   * job is recorded failed (infra) with the cause, so nothing waits on it for ever.
   */
  private lockFailed(row: JobRow, e: unknown): { reason: QueueReason; retryMs: number } {
    const n = (this.lockErrors.get(row.id) ?? 0) + 1;
    const why = describeError(e);
    if (n < MAX_LOCK_ERRORS) {
      this.lockErrors.set(row.id, n);
      log.warn(`${this.o.provider.name} job ${row.id}: could not take its slot locks (${why}); retrying (${n}/${MAX_LOCK_ERRORS})`);
      return { reason: row.queue_reason ?? "waiting_for_slot", retryMs: 200 * n };
    }
    this.lockErrors.delete(row.id);
    log.error(`${this.o.provider.name} job ${row.id}: could not take its slot locks (${why}) ${n} times; recording it failed`);
    const msg = `could not take the job's slot locks under ${join(this.o.stateDir, "slots")} (${why}); check that directory (permissions, symlinks, open-file limit) and submit again`;
    this.store.update(row.id, { status: "failed", failure_kind: "infra", final_response: msg, ended_at: this.now(), queue_reason: null }, ["queued"]);
    return { reason: row.queue_reason ?? "waiting_for_slot", retryMs: 0 };
  }

  /** Once a job's end is in its row, the row (and its persist_error) is the record. */
  private forgetPersistError(id: string): void {
    if (!this.persistErrors.has(id)) return;
    try {
      const st = this.store.get(id)?.status;
      if (st && isTerminal(st)) this.persistErrors.delete(id);
    } catch {
      // the store still fails: keep the message for poll
    }
  }

  private runnerContext() {
    return {
      store: this.store,
      provider: this.o.provider,
      identities: this.o.identities,
      now: this.now,
      graceMs: this.o.graceMs ?? 5000,
      outputCap: this.o.outputCap ?? 4 * 1024 * 1024,
      jobsDir: join(this.o.stateDir, "jobs"),
      maxRetries: this.o.maxRetries ?? 3,
      retryDelayMs: this.o.retryDelayMs ?? ((n: number) => (BACKOFF_S[Math.min(n, BACKOFF_S.length) - 1] ?? 60) * 1000 * (0.8 + Math.random() * 0.4)),
      onPersistError: (id: string, msg: string) => {
        this.persistErrors.set(id, msg);
        log.error(`${this.o.provider.name} job ${id}: could not record its state: ${msg}`);
      },
    };
  }
}
