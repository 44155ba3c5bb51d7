import type { CallToolResult } from "@modelcontextprotocol/server";
import { describeError, isDlError } from "../errors.ts";
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

/**
 * An error the model can act on: what failed and what to try, never a stack or a secret.
 * With `structured`, a DlError that names a `failure_kind` also goes out as
 * `structuredContent` ({error, code, failure_kind}) so a client can branch on it without
 * parsing text. The SDK client checks error results against a tool's output schema
 * too, so a tool that asks for this must publish a schema that allows that shape.
 */
function toolError(e: unknown, structured = false): CallToolResult {
  if (!isDlError(e)) {
    log.error(`unexpected tool failure: ${describeError(e)}`);
    const text = `internal error (${describeError(e)}); the server is still running, try again or report it`;
    return { isError: true, content: [{ type: "text", text }] };
  }
  const text = e.message;
  const kind = e.data.failure_kind;
  if (!structured || typeof kind !== "string") return { isError: true, content: [{ type: "text", text }] };
  return {
    isError: true,
    content: [{ type: "text", text }],
    structuredContent: { error: text, code: e.code, failure_kind: kind },
  };
}

/** Run a handler and translate any throw at this edge (see toolError for `structuredErrors`). */
export async function guarded(
  fn: () => Promise<CallToolResult>,
  o: { structuredErrors?: boolean } = {},
): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (e) {
    return toolError(e, o.structuredErrors);
  }
}
