import type { Config } from "../config.ts";
import type { JobCaps } from "../config-tree.ts";
import { DlError } from "../errors.ts";
import type { JobRow } from "../store/types.ts";
import { workdirGuard } from "../sys/workdir-guard.ts";
import type { WorkspaceGuards } from "../sys/workspace.ts";
import { awaitJob } from "./engine/await-job.ts";
import type { CancelResult, EngineOptions, JobEngine, SubmitResult } from "./engine/engine.ts";
import { flockJobLocks, selfOwner, sysIdentities } from "./engine/machine.ts";
import type { PollView } from "./engine/poll.ts";
import type { Provider } from "./engine/provider.ts";

/**
 * Where one process runs a provider's jobs: its state dir (Config.paths.stateDirs, picked
 * by src/services.ts), the watcher command its answers print, what a relative workdir is
 * relative to (where the server runs), and for tests the engine's clock, tick and grace.
 */
export interface ServiceContext {
  stateDir: string;
  waitCommand: string;
  baseDir: string;
  engine?: Partial<EngineOptions>;
}

/**
 * The workdir guard every provider's jobs pass (the Config's home and protected dirs), and
 * the environment git runs with when the engine resolves a job's project.
 */
export function jobGuards(c: Config): WorkspaceGuards {
  return { ...workdirGuard(c.paths), toolEnv: c.childEnv };
}

/** What the engine asks the provider while it admits and retries (Codex's account: cooldown, adaptive caps). */
type EngineHooks = Pick<EngineOptions, "gate" | "effectiveCap" | "effectiveProjectCap" | "retryDelayMs">;

/**
 * What only one provider has, around the same job trio: checks before a submit records
 * anything (the dsh launcher, agy's binary, Codex's version and quota), how its poll shows
 * a job, what its answers carry beside the jobs (Codex's account), and what the engine
 * asks it while admitting.
 */
export interface ServiceHooks<V, R, X extends object> {
  beforeSubmit?(): void | Promise<void>;
  /**
   * A known job's poll row as the provider's tools show it (default: the engine's view).
   * May be async: what a running child wrote is read through the bounded reader.
   */
  view?(v: PollView, row: JobRow | undefined): V | Promise<V>;
  /** What delegate_to_<name> answers for the finished job (default: its poll view). */
  answer?(v: PollView): R;
  /** Fields every submit and poll answer carries beside the jobs (Codex: its account). */
  extra?(): X;
  /** After cancel_<name> asked the engine to cancel a job: drop what the job held in memory. */
  cancelled?(row: JobRow | undefined): void;
  engine?: EngineHooks;
}

/** One provider's jobs as the engine runs them: its Provider, its caps from SETTINGS, how often a run may be retried. */
export interface ServiceSpec<V, R, X extends object> extends ServiceHooks<V, R, X> {
  provider: Provider;
  caps: Readonly<JobCaps>;
  /** 0 for a provider whose replayed run would redo its changes. */
  maxRetries: number;
}

type PollRow<V> = V | ReturnType<JobEngine["poll"]>[number];

/**
 * One provider's jobs as its MCP tools use them: submit_<name> → submit, poll_<name> →
 * poll, cancel_<name> → cancel, delegate_to_<name> → delegate, and stop when the server
 * leaves. One instance per server process; every instance on the same state dir shares
 * the queue and the caps (flock slots).
 */
// biome-ignore lint/complexity/noBannedTypes: no extra fields is the common case
export class JobService<V = PollView, R = PollView, X extends object = {}> {
  private constructor(
    readonly engine: JobEngine,
    private readonly hooks: ServiceHooks<V, R, X>,
  ) {}

  /**
   * Opens the shared state (fails closed with DlError "storage" when it cannot be
   * written) and reaps dead servers' jobs. Every provider's engine gets the same
   * machine-wide parts: the workdir guard of this Config, git run with the child
   * environment, flock caps in its state dir, this server as the owner.
   */
  // biome-ignore lint/complexity/noBannedTypes: see the class
  static async start<V = PollView, R = PollView, X extends object = {}>(
    c: Config,
    ctx: ServiceContext,
    spec: ServiceSpec<V, R, X>,
  ): Promise<JobService<V, R, X>> {
    const { provider, caps, maxRetries, engine: hooks, ...serviceHooks } = spec;
    const engine = await startMachineEngine(
      {
        provider,
        stateDir: ctx.stateDir,
        caps,
        maxRetries,
        guards: jobGuards(c),
        waitCommand: ctx.waitCommand,
        graceMs: c.jobs.killGraceS * 1000,
        ...hooks,
      },
      ctx.engine,
    );
    return new JobService(engine, serviceHooks);
  }

  /** Every task is checked (after the provider's own checks) before any is recorded; returns ids and the watch command at once. */
  async submit(tasks: readonly unknown[]): Promise<SubmitResult & X> {
    await this.hooks.beforeSubmit?.();
    const r = await this.engine.submit(tasks);
    return { ...r, ...this.extra() };
  }

  /** Per-job snapshots (other servers' jobs read-only); unknown ids pass as the engine answers them. */
  async poll(ids: readonly string[]): Promise<{ jobs: PollRow<V>[] } & X> {
    const view = this.hooks.view;
    const jobs = view ? await Promise.all(pollWith(this.engine, ids, view)) : (this.engine.poll(ids) as PollRow<V>[]);
    return { jobs, ...this.extra() };
  }

  async cancel(id: string): Promise<CancelResult> {
    const result = await this.engine.cancel(id);
    this.hooks.cancelled?.(this.engine.row(id));
    return result;
  }

  /**
   * One job through the same queue and caps, waited for here. An abort (MCP cancel)
   * cancels the job, so nothing runs on after the caller left.
   */
  async delegate(task: Record<string, unknown>, opts: { signal?: AbortSignal; pollMs?: number } = {}): Promise<R> {
    const r = await this.submit([task]);
    const id = r.jobs[0]!.id;
    await awaitJob(this.engine, id, { tool: `delegate_to_${this.engine.provider.name}`, ...opts });
    return this.ended(id);
  }

  /**
   * What delegate_to_<name> answers for job `id` once it has ended: the same answer for a
   * blocking call and for its MCP task, whichever server asks.
   */
  ended(id: string): R {
    const v = this.engine.poll([id])[0]!;
    if (!("provider" in v)) throw new DlError("not_found", `no ${this.engine.provider.name} job ${v.id}`);
    return this.hooks.answer ? this.hooks.answer(v) : (v as R);
  }

  stop(): Promise<void> {
    return this.engine.stop();
  }

  private extra(): X {
    return this.hooks.extra?.() ?? ({} as X);
  }
}

/**
 * What a provider's service chooses for its engine — its caps as config.ts parsed them —
 * while the machine-wide parts are filled in.
 */
type ServiceEngineOptions = Omit<
  EngineOptions,
  "locks" | "identities" | "self" | "maxConcurrent" | "maxPerProject" | "maxQueue" | "staggerMs"
> & { caps: Readonly<JobCaps> };

/**
 * What a process starts its job services as (services.ts): dl serve hands jobs to
 * supervisors (`supervisorCommand`); a supervisor adopts its one job (`adopt`); absent,
 * jobs run in the process itself (tests).
 */
export type JobsRole = Pick<EngineOptions, "supervisorCommand" | "adopt" | "dieWithOrigin">;

/**
 * A provider's engine on this machine: caps as flock slot files in its state dir (so
 * every server shares them), real process identities for the reaper, and this server as
 * the owner of the jobs it starts. `overrides` (tests: tick, grace, clock) win.
 */
async function startMachineEngine(
  options: ServiceEngineOptions,
  overrides: Partial<EngineOptions> = {},
): Promise<JobEngine> {
  // Loaded here, not at the top: `dl wait`, `dl status` and `dl reap` need only the
  // identities above, never the engine.
  const { JobEngine } = await import("./engine/engine.ts");
  const { caps, ...rest } = options;
  const command = overrides.supervisorCommand ?? options.supervisorCommand;
  const { supervisorStarter } = await import("./engine/supervisor-start.ts");
  const supervisors = command && supervisorStarter(command, options.provider, options.stateDir);
  const { engine } = await JobEngine.start({
    ...rest,
    ...(supervisors ? { supervisors } : {}),
    maxConcurrent: caps.maxConcurrent,
    maxPerProject: caps.maxPerProject,
    maxQueue: caps.maxQueue,
    staggerMs: Math.round(caps.staggerS * 1000),
    locks: flockJobLocks(options.stateDir),
    identities: sysIdentities,
    self: selfOwner(),
    ...overrides,
  });
  return engine;
}

/** The engine's poll, each known job's view extended by `view`; unknown ids pass as they are. */
function pollWith<V>(
  engine: JobEngine,
  ids: readonly string[],
  view: (v: PollView, row: JobRow | undefined) => V,
): (V | ReturnType<JobEngine["poll"]>[number])[] {
  return engine.poll(ids).map((v) => ("provider" in v ? view(v, engine.row(v.id)) : v));
}
