import type { JobStore } from "../../store/jobs.ts";
import type { JobRow, QueueReason } from "../../store/types.ts";
import type { WorkspaceGuards } from "../../sys/workspace.ts";
import type { Identities, JobLocks, ProcessOwner } from "./machine.ts";
import type { Provider } from "./provider.ts";

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
  self: ProcessOwner;
  /**
   * The folder this server serves (its cwd: the session's project). Its project key decides
   * which other servers' jobs this one may cancel. Default: cwd.
   */
  callerDir?: string;
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
  /** A lowered per-project cap (adaptive, after throttles), or null for maxPerProject. */
  effectiveProjectCap?: () => number | null;
  /**
   * How often admission ends a dead server's rows when none of our jobs waits on a cap
   * (default 5000 ms). While one does, it reaps at once (at most every REAP_BLOCKED_MS).
   */
  reapEveryMs?: number;
  /**
   * Jobs run by supervisors of their own (dl serve): a job that may start is handed to a
   * new `dl supervise` process, which adopts it and runs it to its end however long this
   * server lives. Absent, jobs run in this process (tests, and the supervisor itself).
   */
  supervisors?: SupervisorStarter;
  /** How to start dl again as a supervisor; startMachineEngine (jobs/service.ts) makes `supervisors` of it. */
  supervisorCommand?: SupervisorCommand;
  /** Supervisor mode: the one job this process adopts from the server `from` and runs to its end. */
  adopt?: { jobId: string; from: string };
  /** DELEGATE_JOBS_DIE_WITH_SERVER, in a supervisor: its job stops once the window it came from is gone. */
  dieWithOrigin?: boolean;
}

/** How this server starts dl again as a job's supervisor. */
export interface SupervisorCommand {
  /** argv prefix that starts this dl (the compiled binary, or bun + entry script). */
  self: readonly string[];
  /** The environment that rebuilds this server's Config (Config.supervisorEnv). */
  env: Readonly<Record<string, string>>;
  /** The server's folder: the supervisor's too (the project its cancels answer to). */
  cwd: string;
}

/** Starts the supervisor of job `row` (whose server is `from`); it outlives this process. */
export type SupervisorStarter = (row: JobRow, from: string) => { pid: number; exited: Promise<number | null> };

/**
 * What the parts of one engine (submit, admission loop, launcher, live reaper, cancel)
 * share. The JobEngine builds it once, so every part sees the same store, id and clock.
 */
export interface EngineContext {
  readonly options: EngineOptions;
  readonly store: JobStore;
  /** This engine's id in the rows it writes; its own rows are never treated as dead. */
  readonly serverId: string;
  readonly now: () => number;
}
