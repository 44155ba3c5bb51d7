/**
 * The shapes every backend normalizes to. Inside dl a conversation is always
 * Anthropic-style content blocks, whatever wire format the endpoint speaks, so the agent
 * loop never branches on format.
 */
type TextBlock = { type: "text"; text: string };
/** Reasoning the model emitted (`thinking` blocks, or OpenAI-style `reasoning_content`). */
type ThinkingBlock = { type: "thinking"; thinking: string; signature?: string };
export type ToolUseBlock = {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
};
export type ToolResultBlock = {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error?: boolean;
};
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock;

export type Message = { role: "user" | "assistant"; content: string | ContentBlock[] };

export type JsonSchema = { type: "object"; properties: Record<string, unknown>; required?: string[] };
export type ToolSpec = { name: string; description: string; input_schema: JsonSchema };

export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
};

export type WireFormat = "anthropic" | "openai";

/** Where and how one request goes out. Built by the gateway rules, consumed by a client. */
export type Endpoint = {
  /** Full URL of the messages or chat-completions endpoint. */
  url: string;
  format: WireFormat;
  /** Sent as both `x-api-key` and `Authorization: Bearer`; never logged or echoed. */
  apiKey: string;
  /** Extra headers (gateway virtual keys and the like). */
  headers?: Record<string, string>;
};

export type ModelRequest = {
  endpoint: Endpoint;
  model: string;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  max_tokens: number;
  stream: boolean;
  /** Whether thinking blocks travel back to the model as `reasoning_content`. */
  resendReasoning: boolean;
  /** Add Anthropic `cache_control` breakpoints (system, last tool, final message). */
  promptCaching: boolean;
  signal: AbortSignal;
};

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "error" | string;

export type ModelResponse = {
  content: ContentBlock[];
  stop_reason: StopReason;
  usage: Usage;
  /** The model the server says answered (message_start / first chunk), "" when unknown. */
  model: string;
  /** Routing headers that name who really answered (`x-bifrost-routing-info-*`). */
  routing: Record<string, string>;
  /** How many retries this response took (429/5xx/stream errors). */
  retries: number;
};

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
});

/**
 * A token count from the wire as a safe non-negative integer. Backends have sent 10.5,
 * -3, 1e19 and strings; any of them reaching a result breaks its output schema and loses
 * the answer, so they are floored, clamped, and anything not a number counts as 0.
 */
export function tokenCount(v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) return 0;
  return Math.min(Math.floor(v), Number.MAX_SAFE_INTEGER);
}

/** Sums stay safe integers too: many turns of clamped figures must not overflow. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: tokenCount(a.input_tokens + b.input_tokens),
    output_tokens: tokenCount(a.output_tokens + b.output_tokens),
    cache_read_tokens: tokenCount(a.cache_read_tokens + b.cache_read_tokens),
    cache_write_tokens: tokenCount(a.cache_write_tokens + b.cache_write_tokens),
  };
}
