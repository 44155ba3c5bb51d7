import { randomBytes } from "node:crypto";
import { DlError } from "../../errors.ts";
import { JobStore } from "../../store/jobs.ts";
import type { JobRow } from "../../store/types.ts";
import { canonicalPath } from "../../sys/paths.ts";
import { resolveWorkspace } from "../../sys/workspace.ts";
import { recordJobEnd } from "../../usage/ledger.ts";
import { AdmissionLoop } from "./admission-loop.ts";
import { type Canceller, type CancelResult, cancelJobs, cancelOwnQueued } from "./cancel.ts";
import { Launcher } from "./launch.ts";
import { LiveReaper, logReaped } from "./live-reap.ts";
import { jobLiveness, type Liveness, settledLiveness } from "./liveness.ts";
import type { EngineContext, EngineOptions } from "./options.ts";
import { type PollView, pollView, unknownView } from "./poll.ts";
import type { Provider } from "./provider.ts";
import type { ReapAction } from "./reaper.ts";
import { prepareJobs, queueBound, type SubmitResult, watchFor } from "./submit.ts";
import { Supervised } from "./supervised.ts";

export type { CancelResult } from "./cancel.ts";
export type { EngineOptions } from "./options.ts";
export type { SubmitResult } from "./submit.ts";

/**
 * One provider's job engine inside one server process. Several servers share a state
 * dir: the SQLite rows are the common queue and record, the flock slots are the caps.
 *
 * This class is the public face and the wiring; the work lives in its parts:
 * submit.ts (validation, queue bound), admission-loop.ts (the admission passes),
 * launch.ts (locks, stagger claim, running jobs), live-reap.ts (dead servers' rows
 * while serving), cancel.ts (cancel and shutdown of queued jobs).
 */
export class JobEngine {
  readonly serverId = `srv-${randomBytes(4).toString("hex")}`;
  private readonly c: EngineContext;
  private readonly reaper: LiveReaper;
  private readonly launcher: Launcher;
  private readonly loop: AdmissionLoop;
  private project: Promise<string> | undefined;
  /** Supervisor mode (EngineOptions.adopt): the one job this process runs. */
  private supervised: Supervised | null = null;

  private constructor(private readonly options: EngineOptions) {
    if (!(options.maxPerProject > 0 && options.maxPerProject <= options.maxConcurrent)) {
      throw new DlError(
        "bad_config",
        `per-project cap ${options.maxPerProject} must be > 0 and <= the global cap ${options.maxConcurrent}`,
      );
    }
    // Fails closed: an unwritable state dir throws DlError "storage" and no engine exists.
    this.c = {
      options,
      store: JobStore.open(options.stateDir, { provider: options.provider.name }),
      serverId: this.serverId,
      now: options.now ?? Date.now,
    };
    this.reaper = new LiveReaper(this.c, (row) => this.launcher.handOffOrphan(row));
    // A job's end frees slots: admission looks again at once.
    // A job's end also goes into the usage ledger, before anything else can prune its row.
    this.launcher = new Launcher(this.c, (id) => {
      recordJobEnd(this.c.store, id);
      this.loop.schedule(0);
      this.supervised?.look();
    });
    this.loop = new AdmissionLoop(this.c, this.launcher, this.reaper);
  }

  /**
   * Opens the store, reaps the rows of dead servers, starts admitting. A supervisor
   * (options.adopt) first adopts its job; `finished` says when that job has ended.
   */
  static async start(options: EngineOptions): Promise<{ engine: JobEngine; reaped: ReapAction[] }> {
    const engine = new JobEngine(options);
    if (options.adopt) engine.supervised = Supervised.adopt(engine.c, engine.launcher, options.adopt);
    const reaped = await engine.reaper.reap();
    logReaped(options.provider.name, reaped);
    engine.loop.schedule(0);
    return { engine, reaped };
  }

  /** Resolves when a supervisor's job has ended (never, for a server). */
  get finished(): Promise<void> {
    return this.supervised?.finished ?? new Promise(() => {});
  }

  get provider(): Provider {
    return this.options.provider;
  }

  /** Validates every task, then records all of them or none. Returns at once. */
  async submit(rawTasks: readonly unknown[]): Promise<SubmitResult> {
    if (this.loop.stopped) throw new DlError("busy", "this server is shutting down; submit again from a live session");
    const { rows, views } = await prepareJobs(rawTasks, this.c);
    // A dead server's queued rows must not fill the bound: end them first.
    if (this.reaper.hasDeadRows()) await this.reaper.reapDead();
    const free = this.options.locks.freeGlobal(this.options.maxConcurrent);
    this.c.store.insertMany(rows, queueBound(this.c, free, rows.length));
    this.loop.schedule(0);
    return {
      jobs: views,
      ...watchFor(
        views.map((v) => v.id),
        this.options.waitCommand,
      ),
    };
  }

  /** Snapshots of jobs by id, including other servers' (read-only); unknown ids say so. */
  poll(ids: readonly string[]): (PollView | ReturnType<typeof unknownView>)[] {
    const rows = new Map(this.c.store.getMany(ids).map((r) => [r.id, r]));
    const now = this.c.now();
    return ids.map((id) => {
      const first = rows.get(id);
      if (!first) return unknownView(id);
      const live = (r: JobRow) => this.liveness(r);
      const { row: r, live: l } = settledLiveness(first, live(first), () => this.c.store.get(id), live);
      return pollView(r, now, l, this.serverId, this.launcher.persistError(id));
    });
  }

  /** The raw row (tests, status). */
  row(id: string): JobRow | undefined {
    return this.c.store.get(id);
  }

  /** Recent jobs of every server, newest first (for status). */
  list(limit = 50): PollView[] {
    const now = this.c.now();
    return this.c.store.listRecent(limit).map((r) => pollView(r, now, this.liveness(r), this.serverId));
  }

  /**
   * Dequeues a queued job or stops a running one of this server; it ends `cancelled`
   * with its locks released. Finished jobs are left as they are. Another live project's
   * job is refused (DlError "not_owner", naming its owner): see cancelRefusal.
   */
  async cancel(id: string): Promise<CancelResult> {
    const [result] = await this.cancelMany([id]);
    return result!;
  }

  /** Cancels all of `ids` or none: every job is checked before the first one changes. */
  async cancelMany(ids: readonly string[]): Promise<CancelResult[]> {
    return cancelJobs(this.c, this.launcher, ids, await this.canceller());
  }

  private async canceller(): Promise<Canceller> {
    return { serverId: this.serverId, project: await this.callerProject(), ownerAlive: (r) => this.liveness(r).owner };
  }

  /** The project key of the folder this server serves, resolved once (git, like a job's). */
  private callerProject(): Promise<string> {
    this.project ??= resolveWorkspace(
      canonicalPath(this.options.callerDir ?? process.cwd()),
      this.options.guards.toolEnv,
    ).then((w) => w.project);
    return this.project;
  }

  /**
   * Graceful stop. Jobs run by supervisors go on: this server's queued jobs are handed to
   * supervisors of their own, which wait in the queue for it (with
   * DELEGATE_JOBS_DIE_WITH_SERVER they are cancelled instead, and the supervisors of its
   * running jobs stop them when they see it gone). Jobs run in this process are killed
   * and recorded, its queued ones cancelled (server_stopped).
   */
  async stop(): Promise<void> {
    if (this.loop.stopped) return;
    this.loop.halt();
    // A reap in flight still writes rows: let it finish before the store closes.
    await this.reaper.inFlight;
    const keep = this.options.supervisors && !this.options.dieWithOrigin;
    if (keep) this.launcher.handOffQueued();
    else cancelOwnQueued(this.c);
    await this.launcher.stopAll("shutdown");
    this.c.store.close();
  }

  /** Ends rows of dead servers now (what `dl reap` does from outside). */
  reap(dryRun = false): Promise<ReapAction[]> {
    return this.reaper.reap(dryRun);
  }

  /** Our own rows are alive by definition; others' owners are checked by pid + start time. */
  private liveness(r: JobRow): Liveness {
    return jobLiveness(r, this.options.identities, this.serverId);
  }
}
