import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { ContentBlock, Message, ToolResultBlock } from "../backends/types.ts";
import { redact, redactIdentifier, redactValue } from "../sys/redact.ts";
import { CONVERSATION_ID } from "./conversation-id.ts";

/**
 * A finished delegation kept so it can be continued (`continue_from`). The messages are
 * kept exactly as they were sent, so a follow-up resends them byte for byte and the
 * backend's prefix cache (llama.cpp, vLLM, Anthropic) skips them: a follow-up costs only
 * its new bytes.
 */
export type StoredConversation = {
  v: 1;
  id: string;
  /** The agent's name as looked up, the resolved workdir and the model that ran. */
  agent: string;
  workdir: string;
  model: string;
  /** The turn budget the system prompt names (kept, or the prompt would differ). */
  prompt_turns: number;
  created_at: number;
  updated_at: number;
  messages: Message[];
};

export const newConversationId = (): string => `cv-${randomBytes(10).toString("hex")}`;

function blockSchema() {
  return z.union([
    z.object({ type: z.literal("text"), text: z.string() }).loose(),
    z.object({ type: z.literal("thinking"), thinking: z.string() }).loose(),
    z
      .object({
        type: z.literal("tool_use"),
        id: z.string(),
        name: z.string(),
        input: z.record(z.string(), z.unknown()),
      })
      .loose(),
    z.object({ type: z.literal("tool_result"), tool_use_id: z.string(), content: z.string() }).loose(),
  ]);
}

let schema: z.ZodType<StoredConversation> | undefined;

/** The stored file's shape (built on first use); a file that does not fit is refused, never half-used. */
export function storedConversationSchema(): z.ZodType<StoredConversation> {
  schema ??= z.object({
    v: z.literal(1),
    id: z.string().regex(CONVERSATION_ID),
    agent: z.string(),
    workdir: z.string(),
    model: z.string(),
    prompt_turns: z.number().int().positive(),
    created_at: z.number(),
    updated_at: z.number(),
    messages: z
      .array(z.object({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(blockSchema())]) }))
      .min(1),
  }) as unknown as z.ZodType<StoredConversation>;
  return schema;
}

/** What a follow-up must share with the conversation it continues. */
export type ConversationKey = { agent: string; workdir: string; model: string };

/** Null when `want` continues `stored` (kept redacted, so compared redacted); else a refusal naming every field that differs. */
export function keyMismatch(stored: StoredConversation, want: ConversationKey): string | null {
  const differs = (["agent", "model", "workdir"] as const)
    .filter((k) => stored[k] !== redactIdentifier(want[k]))
    .map((k) => `${k} (${JSON.stringify(want[k])}, but it ran with ${JSON.stringify(stored[k])})`);
  if (differs.length === 0) return null;
  return `continue_from ${stored.id} cannot be continued with a different ${differs.join(" and ")}: a follow-up runs with the same agent, model and workdir as the conversation it continues (so the backend can reuse its cache); pass those, or start a new delegation without continue_from`;
}

const THINKING_CUT = "[dl: reasoning removed here: it held a key]";

/** A message's blocks as kept: strings redacted; reasoning that needed it goes whole (its signature would no longer match). */
function storableBlocks(blocks: readonly ContentBlock[]): ContentBlock[] {
  const out = blocks.flatMap((b): ContentBlock[] => {
    const kept = redactValue(b);
    return b.type === "thinking" && kept.type === "thinking" && kept.thinking !== b.thinking ? [] : [kept];
  });
  return out.length > 0 || blocks.length === 0 ? out : [{ type: "text", text: THINKING_CUT }];
}

/**
 * The conversation as its file may hold it: every string redacted (sys/redact.ts), so no
 * key the task, a tool result or the model carried reaches the disk. Everything before
 * the first cut stays byte for byte, so a follow-up still reuses the backend's cache up to
 * there, and the conversation still continues.
 */
export function storableConversation(c: StoredConversation): StoredConversation {
  const messages = c.messages.map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? redact(m.content) : storableBlocks(m.content),
  }));
  const key = {
    agent: redactIdentifier(c.agent),
    model: redactIdentifier(c.model),
    workdir: redactIdentifier(c.workdir),
  };
  return { ...redactValue({ ...c, messages: [] }), ...key, messages };
}

const NOT_RUN =
  "[dl: this call was not run: the earlier delegation ended before it. Call the tool again if you still need it.]";

/**
 * The earlier messages, untouched, then the follow-up task as a new user turn. Only what
 * follows them is new: tool calls the earlier run left unanswered (its turn budget ended
 * on them) get a "not run" result first, and when the last message is already a user
 * turn (the run stopped on a failed model call) the task joins it, so roles alternate.
 */
export function continueMessages(prior: readonly Message[], task: string): Message[] {
  const out = [...prior];
  const last = out[out.length - 1];
  const text: ContentBlock = { type: "text", text: task };
  if (last?.role === "assistant") {
    const pending = Array.isArray(last.content) ? last.content.filter((b) => b.type === "tool_use") : [];
    if (pending.length === 0) return [...out, { role: "user", content: task }];
    const results: ToolResultBlock[] = pending.map((b) => ({
      type: "tool_result",
      tool_use_id: b.id,
      content: NOT_RUN,
      is_error: true,
    }));
    return [...out, { role: "user", content: [...results, text] }];
  }
  if (last) {
    const blocks: ContentBlock[] =
      typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
    out[out.length - 1] = { role: "user", content: [...blocks, text] };
    return out;
  }
  return [{ role: "user", content: task }];
}
