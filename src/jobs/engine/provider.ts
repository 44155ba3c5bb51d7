import type { FailureKind } from "../../errors.ts";
import type { JobRow } from "../../store/types.ts";
import type { JailNet } from "../../sys/jail-net.ts";

/**
 * What a coding-CLI provider (Codex, agy, dsh, a test script) tells the engine. The
 * engine owns everything else: ids, queue, caps, stagger, spawn, watchdog, cancel,
 * ownership, persistence and output hygiene.
 */

/** A task as the provider accepted it; the engine persists these fields. */
export interface ValidatedTask {
  task: string;
  /** As given; the engine canonicalises it and runs the workdir guards. */
  workdir: string;
  model: string | null;
  effort: string | null;
  /** Wall-clock budget from start; enforced by the engine's watchdog. */
  timeoutS: number;
  /** Provider-specific fields (sandbox, …), stored as JSON and handed back at launch. */
  params: Record<string, unknown>;
  /** Notes for the caller (quota near the limit, alias resolved, …). */
  warnings: string[];
}

/** How to start one job. The environment is complete: nothing is inherited. */
export interface LaunchSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** A jailed command: what to attach while bwrap waits (sandbox wrapCommand's jailNet). */
  jailNet?: JailNet | null;
  /** A jailed command behind the start marker (wrapCommand's jailMarked): set-up failures read jail_unavailable. */
  jailMarked?: boolean;
  /**
   * The child is dl itself (an agent job's `dl run`), which must see the host's processes
   * (owner pids, identities). Every other child that is not jailed runs, as root, in a
   * pid namespace of its own (sys/pid-namespace.ts).
   */
  selfChild?: boolean;
  /** A private file the child reads as its stdin: how a prompt stays out of argv (sys/process-spawn.ts). */
  stdinFile?: string;
  /**
   * Runs once the child's group has ended, however it ended (the jail's check of the
   * tree). A failure it returns ends the job `failed` with that failure_kind and message;
   * its `changes` (what the run changed, what stayed read-only) are kept in the row.
   */
  afterRun?: () => Promise<RunCheck> | RunCheck;
}

/** What the check after a run found. */
export interface RunCheck {
  failure: { failureKind: FailureKind; message: string } | null;
  /** A JSON object for the row's `changes` column (sandbox/tree-report.ts), or null. */
  changes?: Record<string, unknown> | null;
}

/** What the run produced, handed to `parse` and `classify`. */
export interface RunOutput {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Captured output was cut at the engine's cap. */
  outputTruncated: boolean;
  durationMs: number;
  /** A private directory the provider may have asked the CLI to write into. */
  jobDir: string;
}

export interface ParsedResult {
  finalResponse: string | null;
  usage?: Record<string, unknown> | null;
  sessionId?: string | null;
  warnings?: string[];
  /**
   * The run exited 0 but its own result says it failed (a launcher that reports through a
   * file, not its exit code). Set, the job ends `failed` with this class.
   */
  failure?: FailureClass | null;
}

/**
 * Why a non-zero run failed. `throttle` may be retried; the others never are. `config`
 * is the user's setup (a variable the CLI needs is not given to it): only this job fails,
 * nothing is paused, since no retry or login would fix it. `result_file_refused`: a file
 * the child left for dl to read (result.json, last-message.txt) was a FIFO, a device, a
 * symlink or too large, so the run's own account of itself is not trusted: the job fails
 * whatever its exit code said. `jail_git_tampered`: an agent run's run_bash jail moved
 * out what the delegate planted (git metadata, tool configuration), as a Gemini job's does.
 */
export type FailureClass = Extract<
  FailureKind,
  "quota" | "throttle" | "auth" | "infra" | "config" | "result_file_refused" | "jail_git_tampered" | "other"
>;

export interface Provider {
  /** A PROVIDERS name (jobs/providers/index.ts), or a test provider's. */
  readonly name: string;
  /** Job id prefix, from the same entry ("cx-", "gm-", "dsh-", "ag-"). */
  readonly idPrefix: string;
  /**
   * Checks one raw task and fills defaults. Throws DlError "bad_input" (with what to
   * fix) to refuse it; submit then starts nothing.
   */
  validate(raw: unknown): ValidatedTask;
  /**
   * Checks that need the disk, once the task and its workdir have passed (the agent
   * provider looks its agent up). Throws DlError to refuse; submit then starts nothing.
   * What it returns joins the task's params (what the check found: the agent's source).
   */
  admit?(task: ValidatedTask, workdir: string): Promise<Record<string, unknown> | undefined>;
  /**
   * argv/env/cwd for a job about to start. `jobDir` exists and is private to the job. A
   * throw ends the job `failed` without running anything: failure_kind `infra`, or the
   * `failure_kind` a DlError names in its data (its message is then the whole answer).
   */
  launch(job: JobRow, ctx: { jobDir: string }): LaunchSpec | Promise<LaunchSpec>;
  /**
   * Reads the final response, usage and session id out of a finished run. Files the child
   * wrote are read through sys/child-file.ts (asynchronously: a hostile file never holds
   * the server).
   */
  parse(out: RunOutput, job: JobRow): ParsedResult | Promise<ParsedResult>;
  /**
   * What a run spent, from the files it left in `jobDir`, for a run whose output reported
   * nothing (stopped before it printed its result, or its supervisor died): a usage
   * object in the shape `parse` gives, so the ledger and poll read it alike. An agent's
   * child keeps a transcript of every turn's tokens; a CLI whose usage only its output
   * carries has none.
   */
  spent?(job: JobRow, jobDir: string): Record<string, unknown> | null;
  /**
   * What only this server holds that the job's supervisor must be handed, as environment
   * (a delegate_to_provider job's endpoint and key, which never reach a file): given once,
   * when the job is handed over.
   */
  handOffEnv?(job: JobRow): Record<string, string>;
  /** Classifies a run that did not exit 0 (not called for timeouts or cancels). */
  classify(out: RunOutput, job: JobRow): FailureClass;
}
