/**
 * One error type for everything dl knows how to explain. `code` is stable and machine
 * readable; `message` says what failed and what to do next. Edges (MCP tools, CLI
 * commands) translate a DlError into `isError` text or an exit code; nothing in between
 * formats errors for people.
 */
const DL_ERROR_CODES = [
  "bad_config",
  "bad_input",
  "not_found",
  "path_escape",
  "workdir_forbidden",
  "backend",
  "timeout",
  "cancelled",
  "storage",
  "lock",
  "busy",
  // The job belongs to another live project's session (cancel ownership).
  "not_owner",
  "jail_unavailable",
  "internal",
] as const;
export type DlErrorCode = (typeof DL_ERROR_CODES)[number];

/**
 * Every `failure_kind` dl gives a caller, once: why a tool call was refused, a delegation
 * failed or a job ended without success, the one field a caller branches on. A DlError's
 * code is its kind unless its data names another. docs/TROUBLESHOOTING.md has a row for
 * each, and only these (test/docs/troubleshooting-doc.test.ts).
 */
export const FAILURE_KINDS = [
  ...DL_ERROR_CODES,
  // A tool call the server refused before running it (mcp/tool-call.ts, tool-result.ts).
  "invalid_arguments",
  "unknown_tool",
  "tool_unlisted",
  "tool_error",
  // A provider's gate or its missing binary.
  "gemini_not_allowed",
  "agy_missing",
  // A delegation that ran and did not succeed (agent/failure-kind.ts).
  "auth",
  "rate_limited",
  "turn_limit",
  "output_cut",
  "incomplete",
  // A job's end (jobs/engine/job-outcome.ts, each provider's classify, the jail's checks).
  "quota",
  "throttle",
  "config",
  "infra",
  "other",
  "result_file_refused",
  "server_stopped",
  "jail_git_tampered",
  "jail_git_config",
  "path_refused",
  "provider_key_lost",
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** What a DlError carries besides its message: fields for the caller, and the kind it names if not its code. */
export type DlErrorData = { [field: string]: unknown; failure_kind?: FailureKind };

export class DlError extends Error {
  override readonly name = "DlError";
  constructor(
    readonly code: DlErrorCode,
    message: string,
    readonly data: DlErrorData = {},
  ) {
    super(message);
  }
}

export function isDlError(e: unknown, code?: DlErrorCode): e is DlError {
  return e instanceof DlError && (code === undefined || e.code === code);
}

/**
 * A short, path-free description of an unexpected error: its class and errno code only.
 * OS errors from Bun/Node carry paths and arguments in `message`, which must never reach
 * a result a model or a log reader sees.
 */
export function describeError(e: unknown): string {
  if (e instanceof DlError) return e.message;
  if (e instanceof Error) {
    const errno = (e as NodeJS.ErrnoException).code;
    const cls = (e.constructor?.name || "Error").slice(0, 40);
    return errno ? `${cls} ${String(errno).slice(0, 20)}` : cls;
  }
  return "unknown error";
}
