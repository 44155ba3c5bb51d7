import type { Config } from "../../../config.ts";
import type { JobCaps } from "../../../config-tree.ts";
import { DlError } from "../../../errors.ts";
import { log } from "../../../log.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { WorkspaceGuards } from "../../../sys/workspace.ts";
import { awaitJob } from "../../engine/await-job.ts";
import type { CancelResult, EngineOptions, JobEngine, SubmitResult } from "../../engine/engine.ts";
import type { PollView } from "../../engine/poll.ts";
import { passedValues } from "../../secrets.ts";
import { JobService, type JobsRole } from "../../service.ts";
import { type AccountOptions, type AccountView, CodexAccount } from "./account.ts";
import { codexProvider } from "./provider.ts";
import { CodexQuota } from "./quota.ts";
import { type CodexStatusReport, codexStatusOf } from "./status.ts";
import { CodexVersionGate, type CodexVersionStatus, probeCodexVersion } from "./version.ts";

/**
 * Everything the Codex MCP tools call: delegate_to_codex → delegate, submit_codex →
 * submit, poll_codex → poll, cancel_codex → cancel; status → the CLI, account and quota
 * as this service sees them (`dl status` reads the same without a service: status.ts).
 * One instance per server process; every instance on the same state dir shares queue,
 * caps and the account state.
 */
export interface CodexServiceOptions {
  /** DELEGATE_CODEX_BIN (name on PATH or absolute path). */
  bin: string;
  /** DELEGATE_CODEX_MODEL. */
  defaultModel: string;
  /** DELEGATE_CODEX_ALLOW_DANGER. */
  allowDanger: boolean;
  caps: Readonly<JobCaps>;
  /** DELEGATE_CODEX_STATE_DIR (resolved). */
  stateDir: string;
  /** CODEX_HOME (resolved; ~/.codex by default). */
  codexHome: string;
  quotaWarnPct: number;
  quotaRefusePct?: number | null;
  /** The Codex child environment (config.codexChildEnv: the allowlist plus DELEGATE_CODEX_ENV_PASSTHROUGH). */
  childEnv: Readonly<Record<string, string>>;
  /** The values of DELEGATE_CODEX_ENV_PASSTHROUGH: cut out of what a run reports. */
  secretValues?: readonly string[];
  guards: WorkspaceGuards;
  defaultTimeoutS?: number;
  /** Tests: faster backoff, clocks, engine tick/grace, a scripted version probe. */
  backoffS?: readonly number[];
  /** Tests: shorter throttle window / adaptive period. */
  accountTuning?: Pick<AccountOptions, "throttleWindowMs" | "throttleLimit" | "adaptiveMs">;
  /** How long a read of the session files stays fresh (default 30 s). */
  quotaTtlMs?: number;
  engine?: Partial<EngineOptions>;
  versionProbe?: () => Promise<CodexVersionStatus>;
}

export interface CodexSubmitResult extends SubmitResult {
  account: AccountView;
}

export interface CodexPollResult {
  jobs: ReturnType<JobEngine["poll"]>;
  account: AccountView;
}

export type CodexStatus = CodexStatusReport & { state_dir: string };

/** The Codex service's settings, taken from the one Config. */
export function codexServiceOptions(c: Config, waitCommand: string): CodexServiceOptions {
  return {
    bin: c.codex.bin,
    defaultModel: c.codex.model,
    allowDanger: c.codex.allowDanger,
    caps: c.codex.caps,
    stateDir: c.paths.stateDirs.codex,
    codexHome: c.paths.codexHome,
    quotaWarnPct: c.codex.quotaWarnPct,
    quotaRefusePct: c.codex.quotaRefusePct ?? null,
    // Only the Codex child gets DELEGATE_CODEX_ENV_PASSTHROUGH; git probes do not.
    childEnv: c.codexChildEnv,
    secretValues: passedValues(c.codex.envPassthrough, c.codexChildEnv),
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}

/** This provider's jobs under the Config (jobs/providers PROVIDERS loads it on first use). */
export function startJobs(
  c: Config,
  waitCommand: string,
  _baseDir?: string,
  role: JobsRole = {},
): Promise<CodexService> {
  const o = codexServiceOptions(c, waitCommand);
  return CodexService.start({ ...o, engine: { ...o.engine, ...role } });
}

/**
 * The generic JobService with what only Codex has: its CLI's version gate, the plan
 * quota and the shared account (cooldowns, adaptive caps, auth pause) around every
 * submit, and the account in every answer.
 */
export class CodexService {
  private constructor(
    private readonly jobs: JobService,
    readonly account: CodexAccount,
    readonly quota: CodexQuota,
    readonly version: CodexVersionGate,
    private readonly options: CodexServiceOptions,
  ) {}

  /**
   * Opens the shared state (fails closed with DlError "storage" when it cannot be
   * written) and probes the CLI. A missing or old CLI is logged, not thrown: the server
   * starts and the Codex tools explain what to install.
   */
  static async start(o: CodexServiceOptions): Promise<CodexService> {
    const now = o.engine?.now;
    const account = new CodexAccount({
      stateDir: o.stateDir,
      codexHome: o.codexHome,
      now,
      backoffS: o.backoffS,
      ...o.accountTuning,
    });
    const quota = new CodexQuota({
      codexHome: o.codexHome,
      warnPct: o.quotaWarnPct,
      refusePct: o.quotaRefusePct,
      now,
      ttlMs: o.quotaTtlMs,
    });
    const version = new CodexVersionGate(o.versionProbe ?? (() => probeCodexVersion(o.bin, o.childEnv, o.stateDir)));
    const first = await version.status();
    if (!first.ok) log.warn(`codex: ${first.message}`);
    const provider = codexProvider({
      defaultModel: o.defaultModel,
      allowDanger: o.allowDanger,
      defaultTimeoutS: o.defaultTimeoutS,
      codexHome: o.codexHome,
      childEnv: o.childEnv,
      secretValues: o.secretValues,
      account,
      quota,
      bin: () => {
        const s = version.cached;
        return s?.ok ? s.path : null;
      },
    });
    const engine = {
      provider,
      stateDir: o.stateDir,
      caps: o.caps,
      guards: o.guards,
      maxRetries: 3,
      gate: () => account.gate(),
      effectiveCap: () => account.effectiveCap(o.caps.maxConcurrent),
      effectiveProjectCap: () => account.effectiveCap(o.caps.maxPerProject),
      retryDelayMs: (n: number) => account.retryDelayMs(n),
    };
    const beforeSubmit = async () => {
      await version.require();
      await quota.refresh();
    };
    const jobs = await JobService.start(engine, { beforeSubmit }, o.engine);
    return new CodexService(jobs, account, quota, version, o);
  }

  get engine(): JobEngine {
    return this.jobs.engine;
  }

  /** submit_codex: validates every task (CLI version, quota, models, workdirs) before any starts. */
  async submit(tasks: readonly unknown[], opts: { allowOverQuota?: boolean } = {}): Promise<CodexSubmitResult> {
    const withFlag = opts.allowOverQuota
      ? tasks.map((t) => (t && typeof t === "object" && !Array.isArray(t) ? { allow_over_quota: true, ...t } : t))
      : tasks;
    const r = await this.jobs.submit(withFlag);
    return { ...r, account: this.accountView() };
  }

  /** poll_codex: per-job snapshots (other servers' jobs read-only) plus the account state. */
  poll(ids: readonly string[]): CodexPollResult {
    return { jobs: this.engine.poll(ids), account: this.accountView() };
  }

  /** cancel_codex. */
  cancel(id: string): Promise<CancelResult> {
    return this.jobs.cancel(id);
  }

  /**
   * delegate_to_codex: one job through the same queue and caps, waited for here. An
   * abort (MCP cancel) cancels the job, so nothing runs on after the caller left.
   */
  async delegate(
    task: Record<string, unknown>,
    opts: { signal?: AbortSignal; pollMs?: number; allowOverQuota?: boolean } = {},
  ): Promise<PollView> {
    const r = await this.submit([task], { allowOverQuota: opts.allowOverQuota });
    const id = r.jobs[0]!.id;
    await awaitJob(this.engine, id, { tool: "delegate_to_codex", ...opts });
    return this.ended(id);
  }

  /** What delegate_to_codex answers for job `id` once it has ended (a blocking call and its MCP task alike). */
  ended(id: string): PollView {
    const v = this.engine.poll([id])[0]!;
    if (!("provider" in v)) throw new DlError("not_found", `no Codex job ${v.id}`);
    return v;
  }

  accountView(): AccountView {
    return this.account.view(this.options.caps.maxConcurrent, this.options.caps.maxPerProject);
  }

  /** For `dl status`: the CLI, the account, the plan quota and when it resets. */
  async status(): Promise<CodexStatus> {
    const report = await codexStatusOf({
      cli: this.version.status(),
      quotaRead: this.quota.refresh(),
      account: this.account,
      quota: this.quota,
      caps: this.options.caps,
    });
    return { ...report, state_dir: this.options.stateDir };
  }

  stop(): Promise<void> {
    return this.jobs.stop();
  }
}
