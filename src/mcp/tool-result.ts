import type { CallToolResult } from "@modelcontextprotocol/server";
import { DlError, describeError, isDlError } from "../errors.ts";
import { log } from "../log.ts";
import { TEXT_MAX_CHARS } from "./result-limits.ts";

/**
 * The edge where results and DlErrors become MCP tool results. A structured result goes
 * out as `structuredContent` for clients that read the output schema, with a text part
 * for those that only show text: the caller's rendering, or the JSON when small. Either
 * way the text is cut at TEXT_MAX_CHARS, so it never doubles a large reply.
 */
export function toolOk<T extends Record<string, unknown>>(structured: T, text?: string): CallToolResult {
  return {
    content: [{ type: "text", text: capText(text ?? JSON.stringify(structured, null, 2)) }],
    structuredContent: structured,
  };
}

function capText(text: string): string {
  if (text.length <= TEXT_MAX_CHARS) return text;
  return `${text.slice(0, TEXT_MAX_CHARS)}\n\n[text cut at ${TEXT_MAX_CHARS} of ${text.length} characters; the structured result has the full fields]`;
}

/** The longest error datum passed on: data are names, numbers and short hints, never blobs. */
const DATUM_MAX_CHARS = 500;

/**
 * The data of a DlError a model can act on (the variable that names a forbidden path, the
 * task number, a fix): its scalar fields only. Objects and arrays stay out, so nothing
 * that was never meant for a result (an env, a row) can ride along.
 */
function scalarData(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === "string") out[k] = v.slice(0, DATUM_MAX_CHARS);
    else if (typeof v === "number" || typeof v === "boolean") out[k] = v;
  }
  return out;
}

/**
 * Every refusal or failure of every tool, as one shape. Claude Code hands the model only
 * `JSON.stringify(structuredContent)`, so the structured part carries everything: the
 * message, dl's `code`, a `failure_kind` to branch on (the error's own, else its code)
 * and the error's data. The text part repeats the message for text-only clients. Only
 * tool-call.ts calls this, for every handler, so no tool can leave it out.
 */
export function toolFailure(e: unknown): CallToolResult {
  const err = isDlError(e) ? e : internalError(e);
  const kind = typeof err.data.failure_kind === "string" ? err.data.failure_kind : err.code;
  return {
    isError: true,
    content: [{ type: "text", text: err.message }],
    structuredContent: { ...scalarData(err.data), error: err.message, code: err.code, failure_kind: kind },
  };
}

/** An unexpected throw, logged, and described without paths, stacks or secrets. */
function internalError(e: unknown): DlError {
  log.error(`unexpected tool failure: ${describeError(e)}`);
  return new DlError(
    "internal",
    `internal error (${describeError(e)}); the server is still running, try again or report it`,
  );
}

/**
 * An error result a handler returned without throwing gets the same structured part: its
 * text as `error`, and `failure_kind` "tool_error" unless its structured part names one.
 */
export function withFailureKind(r: CallToolResult): CallToolResult {
  if (!r.isError) return r;
  const sc = (r.structuredContent ?? {}) as Record<string, unknown>;
  if (typeof sc.failure_kind === "string") return r;
  const first = r.content?.[0];
  const text = first?.type === "text" ? first.text : "the tool failed";
  return { ...r, structuredContent: { ...sc, error: sc.error ?? text, failure_kind: "tool_error" } };
}
