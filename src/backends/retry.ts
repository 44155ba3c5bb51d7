/**
 * The one retry layer for model requests (the predecessor learned that two layers
 * multiply attempts). An attempt fails with a DlError whose data says `retryable` and
 * maybe `retryAfterMs`; everything else (cancel, timeout, 4xx) is thrown through at once.
 *
 * Waits use an injectable clock so tests run in microseconds, and every wait honours the
 * request's AbortSignal and the per-turn deadline.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DlError, isDlError } from "../errors.ts";

export type RetryPolicy = {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff; doubles per retry. */
  baseDelayMs: number;
  /** Ceiling for computed backoff. */
  maxDelayMs: number;
  /** Ceiling for a server's Retry-After; longer requests are waited only this long. */
  retryAfterCapMs: number;
};

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 4,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  retryAfterCapMs: 60_000,
});

export type Clock = {
  now(): number;
  /** Resolves after `ms`, rejects as soon as `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  random(): number;
};

export const realClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  // Rejects (AbortError) the moment the signal aborts, which the retry loop reports as cancelled.
  sleep: (ms, signal) => sleep(ms, undefined, { signal }),
};

export type RetryInfo = { attempt: number; delayMs: number; error: DlError };

export type RetryOptions = {
  policy?: Partial<RetryPolicy>;
  clock?: Clock;
  signal: AbortSignal;
  /** Absolute time (clock.now() scale) after which no new attempt or wait starts. */
  deadlineAt?: number;
  onRetry?: (info: RetryInfo) => void;
};

export function cancelledError(): DlError {
  return new DlError("cancelled", "the model request was cancelled before it finished.");
}

export function deadlineError(detail: string): DlError {
  return new DlError(
    "timeout",
    `the model turn hit its deadline (${detail}). Next: raise the per-turn timeout, shrink the task, or pick a faster model.`,
  );
}

/** Backoff for retry number `n` (0-based): exponential with ±25% jitter, or Retry-After capped. */
export function retryDelay(n: number, policy: RetryPolicy, random: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), policy.retryAfterCapMs);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** n);
  return Math.round(exp * (0.75 + random * 0.5));
}

export async function withRetry<T>(
  attempt: (n: number) => Promise<T>,
  opts: RetryOptions,
): Promise<{ value: T; retries: number }> {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.policy };
  const clock = opts.clock ?? realClock;
  for (let n = 0; ; n++) {
    if (opts.signal.aborted) throw cancelledError();
    if (opts.deadlineAt !== undefined && clock.now() >= opts.deadlineAt)
      throw deadlineError("no time left for another attempt");
    try {
      return { value: await attempt(n), retries: n };
    } catch (e) {
      if (opts.signal.aborted) throw cancelledError();
      if (!isDlError(e, "backend") || e.data.retryable !== true) throw e;
      if (n >= policy.maxRetries) throw withNote(e, `Gave up after ${n} ${n === 1 ? "retry" : "retries"}.`);
      const ra = typeof e.data.retryAfterMs === "number" ? e.data.retryAfterMs : undefined;
      const delayMs = retryDelay(n, policy, clock.random(), ra);
      if (opts.deadlineAt !== undefined && clock.now() + delayMs >= opts.deadlineAt) {
        throw withNote(e, `Not retried: the next wait (${Math.ceil(delayMs / 1000)} s) would pass the turn deadline.`);
      }
      opts.onRetry?.({ attempt: n + 1, delayMs, error: e });
      try {
        await clock.sleep(delayMs, opts.signal);
      } catch {
        throw cancelledError();
      }
    }
  }
}

function withNote(e: DlError, note: string): DlError {
  return new DlError(e.code, `${e.message} ${note}`, e.data);
}
