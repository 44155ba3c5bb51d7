import { type FailureKind, isDlError } from "../errors.ts";

/**
 * Why a delegation that started did not succeed, as `failure_kind` (what to branch on)
 * and `code` (dl's error class), the same two fields every refused tool call and every
 * failed job carries. Failures before the run have a DlError (run-delegation.ts); once
 * it runs, the loop ends with a stop reason, and a model call that failed says which
 * HTTP answer it got.
 */
export type DelegationFailure = { failure_kind: FailureKind; code: string };

/** A model call that failed after its retries: the key refused, rate limited, or the backend itself. */
export function backendFailure(e: unknown): DelegationFailure {
  const status = isDlError(e) && typeof e.data.status === "number" ? e.data.status : null;
  if (status === 401 || status === 403) return { failure_kind: "auth", code: "backend" };
  if (status === 429) return { failure_kind: "rate_limited", code: "backend" };
  if (isDlError(e, "timeout")) return { failure_kind: "timeout", code: "timeout" };
  return { failure_kind: "backend", code: "backend" };
}

/** How a run that ended without success reads, from its stop reason (when no error set one). */
export function stopFailure(stop: string): DelegationFailure {
  if (stop === "cancelled") return { failure_kind: "cancelled", code: "cancelled" };
  if (stop === "timeout") return { failure_kind: "timeout", code: "timeout" };
  if (stop === "max_turns") return { failure_kind: "turn_limit", code: "incomplete" };
  if (stop === "max_tokens") return { failure_kind: "output_cut", code: "incomplete" };
  if (stop === "error") return { failure_kind: "bad_input", code: "bad_input" };
  return { failure_kind: "incomplete", code: "incomplete" };
}

/** A delegation that never ran: a full pool (busy), a cancel while waiting, a follow-up it cannot continue. */
export function refusalFailure(e: unknown): DelegationFailure {
  if (!isDlError(e)) return { failure_kind: "busy", code: "busy" };
  const own = typeof e.data.failure_kind === "string" ? e.data.failure_kind : null;
  return { failure_kind: own ?? e.code, code: e.code };
}
