/**
 * Tool-call arguments arrive as JSON text (whole, or in partial deltas joined by the
 * readers). A model that emits broken JSON must not crash the turn: the block keeps its id
 * and name, and its input carries one reserved key explaining the problem, so the agent
 * loop can answer with an error tool_result and let the model try again.
 */
import type { ToolUseBlock } from "./types.ts";

export const INVALID_TOOL_INPUT = "__dl_invalid_tool_input";

export function parseToolInput(raw: string, toolName: string): Record<string, unknown> {
  const text = raw.trim();
  if (text === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message.slice(0, 120) : "parse error";
    return {
      [INVALID_TOOL_INPUT]: `arguments for tool ${toolName} were not valid JSON (${text.length} chars, ${why}); send the call again with a complete JSON object`,
    };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return {
      [INVALID_TOOL_INPUT]: `arguments for tool ${toolName} must be a JSON object, got ${Array.isArray(parsed) ? "an array" : typeof parsed}; send the call again with an object`,
    };
  }
  return parsed as Record<string, unknown>;
}

/** The explanation when a tool call's arguments could not be used, else undefined. */
export function toolInputError(block: ToolUseBlock): string | undefined {
  const v = block.input[INVALID_TOOL_INPUT];
  return typeof v === "string" ? v : undefined;
}
