/**
 * Anthropic Messages format: request body, non-streaming reply, and the SSE reader.
 * Our internal blocks already are Anthropic-shaped, so the work here is cache
 * breakpoints, deciding which thinking blocks travel back, and reassembling streams.
 */
import { MessageCache, StringMemo, ToolsCache, withCacheControl } from "./encode-cache.ts";
import { parseToolInput } from "./tool-input.ts";
import type { ContentBlock, Message, ModelRequest, StopReason, ToolSpec, Usage } from "./types.ts";
import { emptyUsage, tokenCount } from "./types.ts";
import { wireIndex } from "./wire-index.ts";

type Json = Record<string, unknown>;
const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Thinking blocks go back when they carry a provider signature (Anthropic requires those
 * to be echoed during tool use) or when reasoning resend is on; unsigned reasoning from
 * other providers is dropped by default because some of them reject it.
 */
function outgoingBlocks(content: ContentBlock[], resend: boolean): Json[] {
  const out: Json[] = [];
  for (const b of content) {
    const o = outgoingBlock(b, resend);
    if (o) out.push(o);
  }
  return out;
}

function outgoingBlock(b: ContentBlock, resend: boolean): Json | undefined {
  if (b.type !== "thinking") return { ...b };
  if (!b.signature && !resend) return undefined;
  return b.signature
    ? { type: "thinking", thinking: b.thinking, signature: b.signature }
    : { type: "thinking", thinking: b.thinking };
}

export function anthropicBody(req: ModelRequest): Json {
  const messages: Json[] = req.messages.map((m: Message) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content : outgoingBlocks(m.content, req.resendReasoning),
  }));
  const tools: Json[] = req.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.input_schema,
  }));
  let system: unknown = req.system;
  if (req.promptCaching) {
    if (req.system) system = [{ type: "text", text: req.system, cache_control: EPHEMERAL }];
    const lastTool = tools[tools.length - 1];
    if (lastTool) lastTool.cache_control = EPHEMERAL;
    markLastMessage(messages);
  }
  const body: Json = { model: req.model, max_tokens: req.max_tokens, messages, stream: req.stream };
  if (req.system) body.system = system;
  if (tools.length > 0) body.tools = tools;
  return body;
}

/**
 * The JSON text of anthropicBody(req), byte for byte, built from per-message encodings
 * cached across turns (encode-cache.ts). Only the final message carries a cache_control
 * breakpoint, so its cached encoding is kept unmarked and the breakpoint spliced in.
 */
export function anthropicPayload(req: ModelRequest): string {
  // The fast path writes these three fields directly; anything odd takes the exact path.
  if (typeof req.model !== "string" || typeof req.max_tokens !== "number" || typeof req.stream !== "boolean") {
    return JSON.stringify(anthropicBody(req));
  }
  const variant = (req.resendReasoning ? 1 : 0) | (req.promptCaching ? 2 : 0);
  const n = req.messages.length;
  const parts: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const m = req.messages[i]!;
    const enc = encodedMessages.get(m, variant & 1);
    parts[i] = req.promptCaching && i === n - 1 ? markedJson(enc) : enc.json;
  }
  let out = `{"model":${JSON.stringify(req.model)},"max_tokens":${JSON.stringify(req.max_tokens)},"messages":[${parts.join(",")}],"stream":${req.stream}`;
  if (req.system) out += `,"system":${encodedSystem.get(req.system, variant & 2)}`;
  if (req.tools.length > 0) out += `,"tools":${encodedTools.get(req.tools, variant & 2)}`;
  return `${out}}`;
}

/** One message as JSON, plus what splicing a breakpoint into it needs. */
type EncodedMessage = {
  json: string;
  role: string;
  /** String content: its JSON; block content: null. */
  text: string | null;
  empty: boolean;
  /** Outgoing blocks' JSON, and which one (with its source) takes the breakpoint. */
  pieces: string[];
  mark: number;
  markBlock: object | null;
};

const encodedMessages = new MessageCache<EncodedMessage>((m, resend) => {
  const role = JSON.stringify(m.role);
  if (typeof m.content === "string") {
    const text = JSON.stringify(m.content);
    return {
      json: `{"role":${role},"content":${text}}`,
      role,
      text,
      empty: m.content === "",
      pieces: [],
      mark: -1,
      markBlock: null,
    };
  }
  const pieces: string[] = [];
  let mark = -1;
  let markBlock: object | null = null;
  for (const b of m.content) {
    const out = outgoingBlock(b, resend === 1);
    if (!out) continue;
    pieces.push(JSON.stringify(out));
    // Thinking blocks cannot carry cache_control; the last block that can takes it.
    if (out.type !== "thinking") {
      mark = pieces.length - 1;
      markBlock = out;
    }
  }
  return {
    json: `{"role":${role},"content":[${pieces.join(",")}]}`,
    role,
    text: null,
    empty: false,
    pieces,
    mark,
    markBlock,
  };
});

function markedJson(e: EncodedMessage): string {
  if (e.text !== null)
    return e.empty
      ? e.json
      : `{"role":${e.role},"content":[{"type":"text","text":${e.text},"cache_control":{"type":"ephemeral"}}]}`;
  if (e.mark < 0 || !e.markBlock) return e.json;
  const pieces = e.pieces.slice();
  pieces[e.mark] = withCacheControl(e.markBlock, pieces[e.mark]!);
  return `{"role":${e.role},"content":[${pieces.join(",")}]}`;
}

const encodedSystem = new StringMemo((system, caching) =>
  caching
    ? `[{"type":"text","text":${JSON.stringify(system)},"cache_control":{"type":"ephemeral"}}]`
    : JSON.stringify(system),
);

const encodedTools = new ToolsCache((tools: readonly ToolSpec[], caching) => {
  const objs = tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
  const pieces = objs.map((o) => JSON.stringify(o));
  const last = objs.length - 1;
  if (caching && last >= 0) pieces[last] = withCacheControl(objs[last]!, pieces[last]!);
  return `[${pieces.join(",")}]`;
});

function markLastMessage(messages: Json[]): void {
  const last = messages[messages.length - 1];
  if (!last) return;
  if (typeof last.content === "string") {
    if (last.content) last.content = [{ type: "text", text: last.content, cache_control: EPHEMERAL }];
    return;
  }
  const blocks = last.content as Json[];
  // Thinking blocks cannot carry cache_control; mark the last block that can.
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if (b.type !== "thinking") {
      b.cache_control = EPHEMERAL;
      return;
    }
  }
}

/** Anthropic usage → ours; fields present in `u` overwrite `into` (message_delta repeats some). */
function mergeAnthropicUsage(into: Usage, u: unknown): void {
  if (!u || typeof u !== "object") return;
  const x = u as Json;
  if ("input_tokens" in x) into.input_tokens = tokenCount(x.input_tokens);
  if ("output_tokens" in x) into.output_tokens = tokenCount(x.output_tokens);
  if ("cache_read_input_tokens" in x) into.cache_read_tokens = tokenCount(x.cache_read_input_tokens);
  if ("cache_creation_input_tokens" in x) into.cache_write_tokens = tokenCount(x.cache_creation_input_tokens);
}

function blockFrom(raw: Json): ContentBlock | undefined {
  switch (raw.type) {
    case "text":
      return { type: "text", text: String(raw.text ?? "") };
    case "thinking": {
      const b: ContentBlock = { type: "thinking", thinking: String(raw.thinking ?? "") };
      if (typeof raw.signature === "string" && raw.signature) b.signature = raw.signature;
      return b;
    }
    case "tool_use": {
      const input =
        raw.input && typeof raw.input === "object" && !Array.isArray(raw.input)
          ? (raw.input as Json)
          : parseToolInput(typeof raw.input === "string" ? raw.input : "", String(raw.name));
      return { type: "tool_use", id: String(raw.id ?? ""), name: String(raw.name ?? ""), input };
    }
    default:
      // redacted_thinking and server-side tool blocks have no place in our loop.
      return undefined;
  }
}

export type ParsedReply = { content: ContentBlock[]; stop_reason: StopReason; usage: Usage; model: string };

export function parseAnthropicJson(body: Json): ParsedReply {
  const usage = emptyUsage();
  mergeAnthropicUsage(usage, body.usage);
  const content: ContentBlock[] = [];
  if (Array.isArray(body.content)) {
    for (const raw of body.content) {
      const b = raw && typeof raw === "object" ? blockFrom(raw as Json) : undefined;
      if (b) content.push(b);
    }
  }
  return {
    content,
    stop_reason: typeof body.stop_reason === "string" ? body.stop_reason : "end_turn",
    usage,
    model: typeof body.model === "string" ? body.model : "",
  };
}

type Building = {
  kind: "text" | "thinking" | "tool_use" | "other";
  text: string;
  signature: string;
  id: string;
  name: string;
  input?: Json;
};

/** Accumulates an Anthropic Messages SSE stream into a reply. */
export class AnthropicStream {
  /** By the stream's block index: a Map, so a hostile index never sizes an array. */
  private blocks = new Map<number, Building>();
  private usage = emptyUsage();
  private stop: StopReason = "";
  model = "";
  done = false;
  error: { type: string; message: string } | undefined;

  onEvent = (event: string, data: string): void => {
    // The event name duplicates `type` in the payload; the payload is authoritative.
    if (event === "ping") return;
    const ev = JSON.parse(data) as Json;
    switch (ev.type) {
      case "content_block_delta": {
        const b = this.blocks.get(wireIndex(ev.index ?? 0, "content block"));
        const d = ev.delta as Json;
        if (!b || !d) return;
        if (d.type === "text_delta") b.text += d.text as string;
        else if (d.type === "input_json_delta") b.text += d.partial_json as string;
        else if (d.type === "thinking_delta") b.text += d.thinking as string;
        else if (d.type === "signature_delta") b.signature += d.signature as string;
        return;
      }
      case "content_block_start": {
        const cb = (ev.content_block ?? {}) as Json;
        const kind = cb.type === "text" || cb.type === "thinking" || cb.type === "tool_use" ? cb.type : "other";
        const b: Building = { kind, text: "", signature: "", id: String(cb.id ?? ""), name: String(cb.name ?? "") };
        if (kind === "text") b.text = String(cb.text ?? "");
        if (kind === "thinking") b.text = String(cb.thinking ?? "");
        // Some proxies put the whole input in the start event and send no deltas.
        if (kind === "tool_use" && cb.input && typeof cb.input === "object" && Object.keys(cb.input).length > 0)
          b.input = cb.input as Json;
        this.blocks.set(wireIndex(ev.index ?? 0, "content block"), b);
        return;
      }
      case "message_start": {
        const m = (ev.message ?? {}) as Json;
        if (typeof m.model === "string") this.model = m.model;
        mergeAnthropicUsage(this.usage, m.usage);
        return;
      }
      case "message_delta": {
        const d = (ev.delta ?? {}) as Json;
        if (typeof d.stop_reason === "string") this.stop = d.stop_reason;
        mergeAnthropicUsage(this.usage, ev.usage);
        return;
      }
      case "message_stop":
        this.done = true;
        return;
      case "error": {
        const e = (ev.error ?? {}) as Json;
        this.error = { type: String(e.type ?? "error"), message: String(e.message ?? "") };
        return;
      }
      default:
        return;
    }
  };

  result(): ParsedReply {
    const content: ContentBlock[] = [];
    for (const i of [...this.blocks.keys()].sort((x, y) => x - y)) {
      const b = this.blocks.get(i)!;
      if (b.kind === "text") content.push({ type: "text", text: b.text });
      else if (b.kind === "thinking")
        content.push(
          b.signature
            ? { type: "thinking", thinking: b.text, signature: b.signature }
            : { type: "thinking", thinking: b.text },
        );
      else if (b.kind === "tool_use")
        content.push({
          type: "tool_use",
          id: b.id,
          name: b.name,
          input: b.text === "" && b.input ? b.input : parseToolInput(b.text, b.name),
        });
    }
    return { content, stop_reason: this.stop || "end_turn", usage: this.usage, model: this.model };
  }
}
