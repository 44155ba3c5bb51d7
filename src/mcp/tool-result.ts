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

/** An error the model can act on: what failed and what to try, never a stack or a secret. */
function toolError(e: unknown): CallToolResult {
  let text: string;
  if (isDlError(e)) {
    text = e.message;
  } else {
    log.error(`unexpected tool failure: ${describeError(e)}`);
    text = `internal error (${describeError(e)}); the server is still running, try again or report it`;
  }
  return { isError: true, content: [{ type: "text", text }] };
}

/** Run a handler and translate any throw at this edge. */
export async function guarded(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (e) {
    return toolError(e);
  }
}
