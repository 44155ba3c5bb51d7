/**
 * OpenAI chat-completions format: converting our Anthropic-style conversation to
 * messages/tool_calls, and the replies (JSON or SSE) back to blocks.
 *
 * Mapping: tool_use ↔ assistant `tool_calls`; tool_result ↔ `role: "tool"` messages
 * (placed right after the assistant turn, before any user text, as the API requires);
 * thinking ↔ `reasoning_content` (sent back only when resendReasoning is on).
 */
import type { ParsedReply } from "./anthropic.ts";
import { MessageCache, StringMemo, ToolsCache } from "./encode-cache.ts";
import { parseToolInput } from "./tool-input.ts";
import type { ContentBlock, Message, ModelRequest, StopReason, Usage } from "./types.ts";
import { emptyUsage, tokenCount } from "./types.ts";
import { wireIndex } from "./wire-index.ts";

type Json = Record<string, unknown>;

function convertMessage(m: Message, resend: boolean, out: Json[]): void {
  if (typeof m.content === "string") {
    out.push({ role: m.role, content: m.content });
    return;
  }
  if (m.role === "assistant") {
    let text = "";
    let reasoning = "";
    const calls: Json[] = [];
    for (const b of m.content) {
      if (b.type === "text") text += b.text;
      else if (b.type === "thinking") reasoning += b.thinking;
      else if (b.type === "tool_use")
        calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } });
    }
    const msg: Json = { role: "assistant", content: text === "" && calls.length > 0 ? null : text };
    if (calls.length > 0) msg.tool_calls = calls;
    if (resend && reasoning !== "") msg.reasoning_content = reasoning;
    out.push(msg);
    return;
  }
  let text = "";
  for (const b of m.content) {
    if (b.type === "tool_result") out.push({ role: "tool", tool_call_id: b.tool_use_id, content: b.content });
    else if (b.type === "text") text += (text ? "\n\n" : "") + b.text;
  }
  if (text !== "") out.push({ role: "user", content: text });
}

export function openaiBody(req: ModelRequest): Json {
  const messages: Json[] = [];
  if (req.system) messages.push({ role: "system", content: req.system });
  for (const m of req.messages) convertMessage(m, req.resendReasoning, messages);
  const body: Json = { model: req.model, max_tokens: req.max_tokens, messages, stream: req.stream };
  if (req.stream) body.stream_options = { include_usage: true };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  }
  return body;
}

/**
 * The JSON text of openaiBody(req), byte for byte, joined from per-message encodings
 * cached across turns (encode-cache.ts), so a kept tool result is escaped once per run
 * rather than once per turn.
 */
export function openaiPayload(req: ModelRequest): string {
  // The fast path writes these three fields directly; anything odd takes the exact path.
  if (typeof req.model !== "string" || typeof req.max_tokens !== "number" || typeof req.stream !== "boolean") {
    return JSON.stringify(openaiBody(req));
  }
  const resend = req.resendReasoning ? 1 : 0;
  const parts: string[] = [];
  if (req.system) parts.push(encodedSystem.get(req.system, 0));
  for (const m of req.messages) {
    const json = encodedMessages.get(m, resend);
    // A message can map to no wire message at all (blocks with no OpenAI counterpart).
    if (json !== "") parts.push(json);
  }
  let out = `{"model":${JSON.stringify(req.model)},"max_tokens":${JSON.stringify(req.max_tokens)},"messages":[${parts.join(",")}],"stream":${req.stream}`;
  if (req.stream) out += ',"stream_options":{"include_usage":true}';
  if (req.tools.length > 0) out += `,"tools":${encodedTools.get(req.tools, 0)}`;
  return `${out}}`;
}

/** One of our messages as the comma-joined JSON of the wire messages it becomes. */
const encodedMessages = new MessageCache<string>((m, resend) => {
  const out: Json[] = [];
  convertMessage(m, resend === 1, out);
  return out.map((o) => JSON.stringify(o)).join(",");
});

const encodedSystem = new StringMemo((system) => JSON.stringify({ role: "system", content: system }));

const encodedTools = new ToolsCache((tools) =>
  JSON.stringify(
    tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    })),
  ),
);

/**
 * prompt_tokens includes cached tokens in OpenAI's accounting; ours (like Anthropic's)
 * counts them apart, so cached tokens are subtracted from input. DeepSeek reports
 * `prompt_cache_hit_tokens` instead of `prompt_tokens_details.cached_tokens`.
 */
function openaiUsage(u: unknown): Usage {
  const usage = emptyUsage();
  if (!u || typeof u !== "object") return usage;
  const x = u as Json;
  const details = (x.prompt_tokens_details ?? {}) as Json;
  const cached = tokenCount(details.cached_tokens) || tokenCount(x.prompt_cache_hit_tokens);
  usage.input_tokens = tokenCount(tokenCount(x.prompt_tokens) - cached);
  usage.output_tokens = tokenCount(x.completion_tokens);
  usage.cache_read_tokens = cached;
  // Anthropic-backed OpenAI proxies (LiteLLM) pass cache writes through under this name.
  usage.cache_write_tokens = tokenCount(x.cache_creation_input_tokens);
  return usage;
}

function mapFinishReason(reason: unknown, hasTools: boolean): StopReason {
  if (hasTools) return "tool_use";
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "stop":
    case null:
    case undefined:
      return "end_turn";
    default:
      return String(reason);
  }
}

function reasoningOf(m: Json): string {
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === "string" ? r : "";
}

export function parseOpenaiJson(body: Json): ParsedReply {
  const choice = (Array.isArray(body.choices) ? body.choices[0] : undefined) as Json | undefined;
  const msg = (choice?.message ?? {}) as Json;
  const content: ContentBlock[] = [];
  const reasoning = reasoningOf(msg);
  if (reasoning) content.push({ type: "thinking", thinking: reasoning });
  if (typeof msg.content === "string" && msg.content !== "") content.push({ type: "text", text: msg.content });
  const calls = Array.isArray(msg.tool_calls) ? (msg.tool_calls as Json[]) : [];
  for (const c of calls) {
    const fn = (c.function ?? {}) as Json;
    const name = String(fn.name ?? "");
    const args = fn.arguments;
    const input =
      typeof args === "string" ? parseToolInput(args, name) : args && typeof args === "object" ? (args as Json) : {};
    content.push({ type: "tool_use", id: String(c.id ?? ""), name, input });
  }
  return {
    content,
    stop_reason: mapFinishReason(choice?.finish_reason, calls.length > 0),
    usage: openaiUsage(body.usage),
    model: typeof body.model === "string" ? body.model : "",
  };
}

type Call = { id: string; name: string; args: string };

/** Accumulates a chat-completions SSE stream. Tool-call pieces are joined by `index`. */
export class OpenaiStream {
  private text = "";
  private reasoning = "";
  /** By the wire's tool-call index: a Map, so a hostile index never sizes an array. */
  private calls = new Map<number, Call>();
  private finish: unknown = undefined;
  private usage: Usage = emptyUsage();
  model = "";
  /** `[DONE]` seen, or a finish_reason (some servers omit `[DONE]`). */
  done = false;
  sawDoneMarker = false;
  error: { type: string; message: string } | undefined;

  onEvent = (_event: string, data: string): void => {
    if (data === "[DONE]") {
      this.done = true;
      this.sawDoneMarker = true;
      return;
    }
    const ev = JSON.parse(data) as Json;
    if (ev.error && typeof ev.error === "object") {
      const e = ev.error as Json;
      this.error = { type: String(e.type ?? e.code ?? "error"), message: String(e.message ?? "") };
      return;
    }
    if (this.model === "" && typeof ev.model === "string") this.model = ev.model;
    if (ev.usage) this.usage = openaiUsage(ev.usage);
    const choices = ev.choices as Json[] | undefined;
    const choice = choices?.[0];
    if (!choice) return;
    const d = choice.delta as Json | undefined;
    if (d) {
      if (typeof d.content === "string") this.text += d.content;
      const r = d.reasoning_content ?? d.reasoning;
      if (typeof r === "string") this.reasoning += r;
      const tcs = d.tool_calls as Json[] | undefined;
      if (tcs) for (const tc of tcs) this.addCall(tc);
    }
    if (choice.finish_reason != null) {
      this.finish = choice.finish_reason;
      this.done = true;
    }
  };

  private addCall(tc: Json): void {
    // Servers that omit the index send one call per delta: each starts a new call.
    const i = tc.index === undefined ? this.calls.size : wireIndex(tc.index, "tool call");
    let c = this.calls.get(i);
    if (!c) {
      c = { id: "", name: "", args: "" };
      this.calls.set(i, c);
    }
    if (typeof tc.id === "string" && tc.id) c.id = tc.id;
    const fn = tc.function as Json | undefined;
    if (fn) {
      if (typeof fn.name === "string" && fn.name) c.name = fn.name;
      if (typeof fn.arguments === "string") c.args += fn.arguments;
    }
  }

  result(): ParsedReply {
    const content: ContentBlock[] = [];
    if (this.reasoning) content.push({ type: "thinking", thinking: this.reasoning });
    if (this.text) content.push({ type: "text", text: this.text });
    let n = 0;
    for (const i of [...this.calls.keys()].sort((x, y) => x - y)) {
      const c = this.calls.get(i)!;
      n++;
      content.push({ type: "tool_use", id: c.id || `call_${n}`, name: c.name, input: parseToolInput(c.args, c.name) });
    }
    return { content, stop_reason: mapFinishReason(this.finish, n > 0), usage: this.usage, model: this.model };
  }
}
