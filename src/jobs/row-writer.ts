import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import type { JobStore } from "../store/jobs.ts";
import type { JobPatch, JobRow } from "../store/types.ts";

/** A compare-and-set write: it landed, the row had left the expected status, or the store threw. */
export type WriteResult = "changed" | "gone" | "error";

const PERSIST_RETRY_MS = [100, 500, 2000] as const;

export interface RowWriterOptions {
  store: Pick<JobStore, "update">;
  now: () => number;
  /** A write of this job's state failed: the engine keeps it for poll and logs it. */
  onPersistError: (id: string, message: string) => void;
  /** Backoff (ms) between attempts of a write that must land (default 100/500/2000). */
  persistRetryMs?: readonly number[];
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
    private readonly o: RowWriterOptions,
  ) {}

  write(patch: JobPatch, expect: JobRow["status"][] = ["running"]): WriteResult {
    try {
      return this.o.store.update(this.id, patch, expect) ? "changed" : "gone";
    } catch (e) {
      this.lastError = describeError(e);
      this.o.onPersistError(this.id, this.lastError);
      return "error";
    }
  }

  /** A write that must land: retried with backoff while the store throws. */
  async persist(patch: JobPatch): Promise<WriteResult> {
    let r = this.write(patch);
    for (const ms of this.o.persistRetryMs ?? PERSIST_RETRY_MS) {
      if (r !== "error") break;
      await Bun.sleep(ms);
      r = this.write(patch);
    }
    return r;
  }

  /**
   * Records the job's end. If that keeps failing (a full disk, a value the store refuses),
   * or `cause` says the run could not be trusted, a minimal `failed`/infra row naming the
   * error is written instead: a row left `running` would hold `dl wait` for ever.
   */
  async finish(patch: JobPatch, cause?: string): Promise<void> {
    if (cause === undefined && (await this.persist(patch)) !== "error") return;
    const why = cause ?? `could not record the job's end (${this.lastError}); recorded as failed instead`;
    log.error(`job ${this.id}: ${why}`);
    const fallback: JobPatch = {
      status: "failed",
      failure_kind: "infra",
      exit_code: patch.exit_code ?? null,
      ended_at: patch.ended_at ?? this.o.now(),
      persist_error: why.slice(0, 500),
    };
    if ((await this.persist(fallback)) === "error")
      log.error(
        `job ${this.id}: its row stays running until this server restarts (the store keeps failing: ${this.lastError})`,
      );
  }

  /** Ends the job as failed with a message for the caller. */
  fail(kind: string, message: string): Promise<void> {
    return this.finish({ status: "failed", failure_kind: kind, final_response: message, ended_at: this.o.now() });
  }
}
