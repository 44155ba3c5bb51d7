/**
 * One error type for everything dl knows how to explain. `code` is stable and machine
 * readable; `message` says what failed and what to do next. Edges (MCP tools, CLI
 * commands) translate a DlError into `isError` text or an exit code; nothing in between
 * formats errors for people.
 */
export type DlErrorCode =
  | "bad_config"
  | "bad_input"
  | "not_found"
  | "path_escape"
  | "workdir_forbidden"
  | "backend"
  | "timeout"
  | "cancelled"
  | "storage"
  | "lock"
  | "busy"
  /** The job belongs to another live project's session (cancel ownership). */
  | "not_owner"
  | "jail_unavailable"
  | "internal";

export class DlError extends Error {
  override readonly name = "DlError";
  constructor(
    readonly code: DlErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
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
