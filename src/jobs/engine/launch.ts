import { join } from "node:path";
import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import { isTerminal, type JobRow, type QueueReason } from "../../store/types.ts";
import type { SlotLease } from "../../sys/slots.ts";
import { backoffMs } from "./backoff.ts";
import type { JobStopCause } from "./job-outcome.ts";
import type { EngineContext } from "./options.ts";
import { type RunnerContext, runJob } from "./runner.ts";
import { handOver } from "./supervisor-start.ts";

/** Started, or why the job still waits and (if known) how soon to try it again. */
export type LaunchOutcome = "started" | { reason: QueueReason; retryMs?: number };

/** A job this server runs: how to stop it, when it has ended, the slots it holds. */
interface Active {
  abort: AbortController;
  done: Promise<void>;
  /** Released when the job ends. */
  locks: DisposableStack;
}

/** Lock errors (not contention) a job meets before it is recorded failed. */
const MAX_LOCK_ERRORS = 3;

/**
 * Starts admitted jobs of this server and keeps track of them until they end. The flock
 * slots are the real caps (the admission plan is only a forecast from the rows), so a
 * job starts only once it holds its workspace, global and project slots and has won the
 * stagger claim in the store; otherwise everything taken goes back and it keeps waiting.
 */
export class Launcher {
  private readonly active = new Map<string, Active>();
  /** Writes of a job's state that failed, kept for poll until its row shows the end. */
  private readonly persistErrors = new Map<string, string>();
  private readonly lockErrors = new Map<string, number>();

  /** `onEnded` runs after each job ends and its slots are free (admission looks again). */
  constructor(
    private readonly c: EngineContext,
    private readonly onEnded: (id: string) => void,
  ) {}

  /** The last failed write of job `id`'s state, if it is not yet superseded by its row. */
  persistError(id: string): string | undefined {
    return this.persistErrors.get(id);
  }

  /** Whether this server runs job `id` (only then can it stop it). */
  runs(id: string): boolean {
    return this.active.has(id);
  }

  /** Stops one job of this server and resolves once it is recorded; null if it is not ours. */
  stop(id: string, reason: JobStopCause): Promise<void> | null {
    const mine = this.active.get(id);
    if (!mine) return null;
    mine.abort.abort(reason);
    return mine.done;
  }

  /** Stops every job of this server; resolves when all are recorded. */
  async stopAll(reason: JobStopCause): Promise<void> {
    const all = [...this.active.values()];
    for (const a of all) a.abort.abort(reason);
    await Promise.all(all.map((a) => a.done));
  }

  /** The jobs handed to supervisors that have not yet adopted them, and those supervisors. */
  private readonly handedOff = new Map<string, { pid: number }>();

  /**
   * Hands a job that may start to a supervisor of its own (EngineOptions.supervisors): it
   * adopts the row, takes the locks and the stagger claim itself and runs the job to its
   * end, whatever becomes of this server. Until it has adopted the row, the row stays
   * ours but is not handed off twice; its exit tells admission to look again.
   */
  private handOff(
    row: JobRow,
    start: NonNullable<EngineContext["options"]["supervisors"]>,
    from: string = this.c.serverId,
  ): LaunchOutcome {
    if (this.handedOff.has(row.id)) return { reason: row.queue_reason ?? "waiting_for_slot" };
    let child: ReturnType<typeof start>;
    try {
      child = handOver(this.c.store, row, from, start, this.c.options.identities);
    } catch (e) {
      return this.lockFailed(row, e, "start its supervisor");
    }
    this.handedOff.set(row.id, { pid: child.pid });
    void child.exited.then(() => {
      this.handedOff.delete(row.id);
      this.onEnded(row.id);
    });
    return { reason: row.queue_reason ?? "waiting_for_slot" };
  }

  /**
   * A queued job whose server died (the reaper found it): handed to a supervisor of its
   * own, which adopts it from that server and waits in the queue for it, instead of it
   * being recorded lost. False when this engine hands nothing off.
   */
  handOffOrphan(row: JobRow): boolean {
    const start = this.c.options.supervisors;
    if (!start || row.server_id === null) return false;
    this.handOff(row, start, row.server_id);
    return this.handedOff.has(row.id);
  }

  /** On a graceful stop: every queued job of this server not yet handed off goes to a supervisor, to wait there. */
  handOffQueued(): void {
    const start = this.c.options.supervisors;
    if (!start) return;
    for (const row of this.c.store.listByStatus(["queued"])) {
      if (row.server_id !== this.c.serverId || this.handedOff.has(row.id)) continue;
      const r = this.handOff(row, start);
      if (!this.handedOff.has(row.id))
        log.warn(`${this.c.options.provider.name} job ${row.id}: left queued (${JSON.stringify(r)})`);
    }
  }

  /** Takes the locks and the stagger claim, then runs the job in the background. */
  launch(row: JobRow, now: number, cap: number, projectCap: number = this.c.options.maxPerProject): LaunchOutcome {
    // A supervisor runs its own job here; a server hands each job to a supervisor.
    const supervisors = this.c.options.adopt ? undefined : this.c.options.supervisors;
    if (supervisors) return this.handOff(row, supervisors);
    // Every way out of this method before the job starts (no slot, a throw, a lost
    // stagger claim) gives back what was taken, or that checkout and slot would stay busy
    // for every server until this one exits. A started job takes the locks over.
    using held = new DisposableStack();
    let taken: LaunchOutcome;
    try {
      taken = this.takeSlots(row, cap, projectCap, held);
    } catch (e) {
      return this.lockFailed(row, e);
    }
    if (taken !== "started") return taken;
    this.lockErrors.delete(row.id);
    const claim = this.c.store.claimLaunch(
      row.id,
      { started_at: now, last_activity_at: now },
      now,
      this.c.options.staggerMs,
    );
    if (!claim.ok) {
      return "waitMs" in claim
        ? { reason: "waiting_for_slot", retryMs: claim.waitMs }
        : { reason: "waiting_for_slot", retryMs: 0 };
    }
    const locks = held.move();
    const abort = new AbortController();
    const started: JobRow = { ...row, status: "running", started_at: now, last_activity_at: now };
    const done = runJob(started, this.runnerContext(), abort.signal)
      .catch((e) => log.error(`${this.c.options.provider.name} job ${row.id}: ${describeError(e)}`))
      .finally(() => {
        locks.dispose();
        this.active.delete(row.id);
        this.forgetPersistError(row.id);
        this.onEnded(row.id);
      });
    this.active.set(row.id, { abort, done, locks });
    return "started";
  }

  /** Workspace, global and project slots in that order, added to `held` as taken. */
  private takeSlots(
    row: JobRow,
    cap: number,
    projectCap: number,
    held: DisposableStack,
  ): "started" | { reason: QueueReason } {
    const l = this.c.options.locks;
    const hold = (lock: SlotLease) => held.defer(() => lock.release());
    const ws = l.tryWorkspace(row.workspace_root, row.id);
    if (!ws) return { reason: "workspace_busy" };
    hold(ws);
    const g = l.tryGlobal(cap, row.id);
    if (!g) return { reason: cap < this.c.options.maxConcurrent ? "adaptive_cap" : "global_cap" };
    hold(g);
    const pr = l.tryProject(row.project, projectCap, row.id);
    if (!pr) return { reason: projectCap < this.c.options.maxPerProject ? "adaptive_cap" : "waiting_for_slot" };
    hold(pr);
    return "started";
  }

  /**
   * A lock call failed (EMFILE, an unwritable or symlinked slot file), which is not
   * contention, or its supervisor could not be started. A passing fault is retried on
   * later passes; after MAX_LOCK_ERRORS the job is recorded failed (infra) with the cause,
   * so nothing waits on it for ever.
   */
  private lockFailed(row: JobRow, e: unknown, what = "take its slot locks"): { reason: QueueReason; retryMs: number } {
    const name = this.c.options.provider.name;
    const n = (this.lockErrors.get(row.id) ?? 0) + 1;
    const why = describeError(e);
    if (n < MAX_LOCK_ERRORS) {
      this.lockErrors.set(row.id, n);
      log.warn(`${name} job ${row.id}: could not ${what} (${why}); retrying (${n}/${MAX_LOCK_ERRORS})`);
      return { reason: row.queue_reason ?? "waiting_for_slot", retryMs: 200 * n };
    }
    this.lockErrors.delete(row.id);
    log.error(`${name} job ${row.id}: could not ${what} (${why}) ${n} times; recording it failed`);
    const slots = join(this.c.options.stateDir, "slots");
    const msg =
      what === "take its slot locks"
        ? `could not take the job's slot locks under ${slots} (${why}); check that directory (permissions, symlinks, open-file limit) and submit again`
        : `could not ${what} (${why}); check that dl's binary can run and the state dir is writable, then submit again`;
    this.c.store.update(
      row.id,
      { status: "failed", failure_kind: "infra", final_response: msg, ended_at: this.c.now(), queue_reason: null },
      ["queued"],
    );
    return { reason: row.queue_reason ?? "waiting_for_slot", retryMs: 0 };
  }

  /** Once a job's end is in its row, the row (and its persist_error) is the record. */
  private forgetPersistError(id: string): void {
    if (!this.persistErrors.has(id)) return;
    try {
      const st = this.c.store.get(id)?.status;
      if (st && isTerminal(st)) this.persistErrors.delete(id);
    } catch {
      // the store still fails: keep the message for poll
    }
  }

  /** The runner's view of this engine, with the option defaults filled in. */
  private runnerContext(): RunnerContext {
    const { options, store, now } = this.c;
    return {
      store,
      provider: options.provider,
      identities: options.identities,
      now,
      graceMs: options.graceMs ?? 5000,
      outputCap: options.outputCap ?? 4 * 1024 * 1024,
      jobsDir: join(options.stateDir, "jobs"),
      maxRetries: options.maxRetries ?? 3,
      retryDelayMs: options.retryDelayMs ?? ((n: number) => backoffMs(n) * (0.8 + Math.random() * 0.4)),
      onPersistError: (id: string, msg: string) => {
        this.persistErrors.set(id, msg);
        log.error(`${options.provider.name} job ${id}: could not record its state: ${msg}`);
      },
    };
  }
}
