import { describeError, type FailureKind } from "../../errors.ts";
import { log } from "../../log.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { JobPatch, JobRow } from "../../store/types.ts";
import { redact } from "../../sys/redact.ts";
import { saveOutcome } from "./outcome-file.ts";

/** A compare-and-set write: it landed, the row had left the expected status, or the store threw. */
export type WriteResult = "changed" | "gone" | "error";

const PERSIST_RETRY_MS = [100, 500, 2000] as const;
/** Pauses between the background attempts to record an end the store refused (the last repeats). */
const LATE_RETRY_MS = [1000, 2000, 5000, 10_000, 30_000] as const;

export interface RowWriterOptions {
  store: Pick<JobStore, "update">;
  now: () => number;
  /** A write of this job's state failed: the engine keeps it for poll and logs it. */
  onPersistError: (id: string, message: string) => void;
  /** Backoff (ms) between attempts of a write that must land (default 100/500/2000). */
  persistRetryMs?: readonly number[];
  /** Pauses between background attempts once finish gave up (default 1 s … 30 s, the last repeating). */
  lateRetryMs?: readonly number[];
}

/** Where the job's end is kept before the store records it (see outcome-file.ts). */
export interface OutcomeTarget {
  jobDir: string;
  /** The attempt's start, so a record of an earlier attempt is never applied. */
  startedAt: number | null;
}

/**
 * The runner's only way to its own row: every write is a compare-and-set on `running`,
 * and a store that throws never escapes (the runner must always reach its end).
 */
export class JobRowWriter {
  /** The store's last error, named in the fallback row and the logs. */
  lastError = "";

  constructor(
    readonly id: string,
    private readonly options: RowWriterOptions,
    private readonly outcome?: OutcomeTarget,
  ) {}

  write(patch: JobPatch, expect: JobRow["status"][] = ["running"]): WriteResult {
    try {
      return this.options.store.update(this.id, patch, expect) ? "changed" : "gone";
    } catch (e) {
      this.lastError = describeError(e);
      this.options.onPersistError(this.id, this.lastError);
      return "error";
    }
  }

  /** A write that must land: retried with backoff while the store throws. */
  async persist(patch: JobPatch): Promise<WriteResult> {
    let r = this.write(patch);
    for (const ms of this.options.persistRetryMs ?? PERSIST_RETRY_MS) {
      if (r !== "error") break;
      await Bun.sleep(ms);
      r = this.write(patch);
    }
    return r;
  }

  /**
   * Records the job's end. It is first kept in the job's outcome file, so a store that
   * fails now loses nothing: the next start or `dl reap` records it from there. If the
   * write keeps failing (a full disk, a value the store refuses), or `cause` says the run
   * could not be trusted, a minimal `failed`/infra row naming the error is written
   * instead. If even that fails, both are retried in the background until the store
   * takes one: a row left `running` would hold `dl wait` for ever.
   */
  async finish(patch: JobPatch, cause?: string): Promise<void> {
    if (cause === undefined) {
      this.keep(patch);
      if ((await this.persist(patch)) !== "error") return;
    }
    const why = cause ?? `could not record the job's end (${this.lastError}); recorded as failed instead`;
    log.error(`job ${this.id}: ${why}`);
    const fallback: JobPatch = {
      status: "failed",
      failure_kind: "infra",
      exit_code: patch.exit_code ?? null,
      ended_at: patch.ended_at ?? this.options.now(),
      // Redacted before the cut: a key across character 500 would keep its first part.
      persist_error: redact(why).slice(0, 500),
    };
    if (cause !== undefined) this.keep(fallback);
    if ((await this.persist(fallback)) !== "error") return;
    log.error(
      `job ${this.id}: the store keeps failing (${this.lastError}); its end is kept and will be recorded once the store can be written`,
    );
    this.retryLater(cause === undefined ? [patch, fallback] : [fallback]);
  }

  /** Writes the end to the job's outcome file (best effort: the store write still follows). */
  private keep(patch: JobPatch): void {
    if (!this.outcome) return;
    const rec = { id: this.id, started_at: this.outcome.startedAt, patch };
    if (!saveOutcome(this.outcome.jobDir, rec)) log.warn(`job ${this.id}: could not keep its end in its job dir`);
  }

  /**
   * Tries the patches in order, again and again, until one lands or the row has left
   * `running`. The timer never keeps the process alive; if it exits first, the outcome
   * file is the record.
   */
  private retryLater(patches: readonly JobPatch[], attempt = 0): void {
    const pauses = this.options.lateRetryMs ?? LATE_RETRY_MS;
    const ms = pauses[Math.min(attempt, pauses.length - 1)] ?? 30_000;
    const timer = setTimeout(() => {
      for (const p of patches) {
        let r: WriteResult;
        try {
          r = this.options.store.update(this.id, p, ["running"]) ? "changed" : "gone";
        } catch {
          continue;
        }
        if (r === "changed") log.info(`job ${this.id}: its end is recorded now that the store can be written`);
        return;
      }
      this.retryLater(patches, attempt + 1);
    }, ms);
    timer.unref?.();
  }

  /** Ends the job as failed with a message for the caller. */
  fail(kind: FailureKind, message: string): Promise<void> {
    return this.finish({ status: "failed", failure_kind: kind, final_response: message, ended_at: this.options.now() });
  }
}
