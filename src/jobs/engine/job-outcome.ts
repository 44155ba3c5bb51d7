import type { FailureKind } from "../../errors.ts";
import type { JobPatch, JobStatus } from "../../store/types.ts";
import type { FailureClass } from "./provider.ts";

/**
 * How a run that nobody stopped ends: the one decision of the runner, kept pure so a
 * test can walk every branch without a process.
 */

/** Why the engine stopped a running job (carried as its AbortSignal's reason). */
export type JobStopCause = "cancel" | "shutdown";

export interface RunFacts {
  /** The watchdog fired before the child exited. */
  timedOut: boolean;
  exitCode: number | null;
  /**
   * The provider found that a run which exited 0 produced no result (agy printing no
   * JSON, or a JSON error): it fails with this class like a non-zero exit would.
   */
  outputFailure?: FailureClass | null;
  /** The provider's reading of a non-zero exit (only asked for when it matters). */
  classify: () => FailureClass;
  /** Throttled runs already replayed for this job. */
  retryCount: number;
  maxRetries: number;
}

export type JobOutcome =
  | { status: Exclude<JobStatus, "queued">; failureKind: FailureKind | null }
  /** A throttle within the retry budget: back to the queue as retry number `retry`. */
  | { status: "queued"; retry: number };

export function chooseOutcome(f: RunFacts): JobOutcome {
  if (f.timedOut) return { status: "timeout", failureKind: "timeout" };
  if (f.exitCode === 0 && !f.outputFailure) return { status: "done", failureKind: null };
  // A hostile result file outranks the exit code: the run's own account is not trusted.
  if (f.outputFailure === "result_file_refused") return { status: "failed", failureKind: "result_file_refused" };
  // So does what dl's own run_bash jail moved out (an agent job's dl run says so in its result).
  if (f.outputFailure === "jail_git_tampered") return { status: "failed", failureKind: "jail_git_tampered" };
  let kind: FailureClass;
  try {
    kind = f.exitCode === 0 && f.outputFailure ? f.outputFailure : f.classify();
  } catch {
    kind = "other";
  }
  if (kind === "throttle" && f.retryCount < f.maxRetries) return { status: "queued", retry: f.retryCount + 1 };
  if (kind === "auth") return { status: "auth_failed", failureKind: "auth" };
  return { status: "failed", failureKind: kind };
}

/**
 * The row change for an outcome. A retry forgets the child and the start so the job
 * queues like a new one, due after its backoff.
 */
export function outcomePatch(o: JobOutcome, ended: number, retryDelayMs: (n: number) => number): JobPatch {
  if (o.status !== "queued") return { status: o.status, failure_kind: o.failureKind, ended_at: ended };
  return {
    status: "queued",
    queue_reason: "throttle_cooldown",
    retry_count: o.retry,
    retry_at: ended + retryDelayMs(o.retry),
    started_at: null,
    child_pid: null,
    child_pgid: null,
    child_start: null,
    child_cmd: null,
  };
}

/** A job the engine stopped: cancelled, and marked server_stopped when the server shut down. */
export function stoppedPatch(cause: JobStopCause, ended: number, exitCode: number | null = null): JobPatch {
  return {
    status: "cancelled",
    failure_kind: cause === "shutdown" ? "server_stopped" : null,
    exit_code: exitCode,
    ended_at: ended,
  };
}
