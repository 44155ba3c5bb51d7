import type { ContentBlock, ToolUseBlock } from "../backends/types.ts";

/**
 * What the model sent, made safe to send back: empty text blocks are dropped (the
 * Anthropic API rejects them) and a tool call without an id gets one, so its result can
 * be matched.
 */
export function tidyContent(content: ContentBlock[], turn: number): ContentBlock[] {
  const out: ContentBlock[] = [];
  let n = 0;
  for (const b of content) {
    if (b.type === "text" && b.text.trim() === "") continue;
    if (b.type === "tool_use" && !b.id) out.push({ ...b, id: `toolu_dl_${turn}_${n++}` });
    else out.push(b);
  }
  return out;
}

/** The reply's text blocks, joined and trimmed. */
export function textOf(content: ContentBlock[]): string {
  return content
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n")
    .trim();
}

export function toolUsesOf(content: ContentBlock[]): ToolUseBlock[] {
  return content.filter((b): b is ToolUseBlock => b.type === "tool_use");
}
