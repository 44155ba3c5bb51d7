import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describeError, isDlError } from "../errors.ts";
import { log } from "../log.ts";

/**
 * The edge where results and DlErrors become MCP tool results. A structured result goes
 * out twice: as `structuredContent` for clients that read the output schema, and as JSON
 * text for those that only show text.
 */
export function toolOk<T extends Record<string, unknown>>(structured: T, text?: string): CallToolResult {
  return {
    content: [{ type: "text", text: text ?? JSON.stringify(structured, null, 2) }],
    structuredContent: structured,
  };
}

/**
 * An error the model can act on: what failed and what to try, never a stack or a secret.
 * With `structured`, a DlError that names a `failure_kind` also goes out as
 * `structuredContent` ({error, code, failure_kind}) so a client can branch on it without
 * parsing text. Only for tools without an output schema: the SDK client checks error
 * results against it too.
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
