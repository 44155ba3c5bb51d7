import { sanitizeLine } from "../../../sys/sanitize.ts";

/**
 * `dl logs cx-…`: what `codex exec --json` printed (one event per line, kept in the job's
 * output tail), as steps like an agent job's transcript: its turns with their tokens, each
 * command with its exit code, file changes, messages and errors. Lines that are not
 * events (stderr) are shown as they are; null when the text holds no event at all.
 */
type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const text = (v: unknown, cap = 200) => (typeof v === "string" ? sanitizeLine(v, cap) : "");

function itemLine(item: Json): string {
  switch (item.type) {
    case "agent_message":
      return `  message  ${text(item.text)}`;
    case "command_execution":
      return `  command  ${text(item.command, 300)}  exit ${typeof item.exit_code === "number" ? item.exit_code : "-"}`;
    case "file_change": {
      const changes = Array.isArray(item.changes) ? item.changes.map(obj).filter((c): c is Json => c !== null) : [];
      return `  files    ${changes.map((c) => `${text(c.kind, 20) || "change"} ${text(c.path, 200)}`).join(", ") || "-"}`;
    }
    case "reasoning":
      return "  reasoning";
    default:
      return `  ${text(item.type, 40) || "item"}`;
  }
}

function eventLine(e: Json, turn: { n: number }): string | null {
  if (e.type === "thread.started") return `session ${text(e.thread_id, 80)}`;
  if (e.type === "turn.started") return `turn ${++turn.n}`;
  if (e.type === "item.completed") return obj(e.item) ? itemLine(obj(e.item)!) : null;
  if (e.type === "turn.completed") {
    const u = obj(e.usage) ?? {};
    return `  turn ${turn.n} done  in ${n(u.input_tokens)} (cached ${n(u.cached_input_tokens)})  out ${n(u.output_tokens)}`;
  }
  if (e.type === "error") return `  error    ${text(e.message, 300)}`;
  if (e.type === "turn.failed") return `  failed   ${text(obj(e.error)?.message, 300)}`;
  return null;
}

export function codexSteps(output: string): string[] | null {
  const lines: string[] = [];
  const turn = { n: 0 };
  let events = 0;
  for (const raw of output.split("\n")) {
    const t = raw.trim();
    if (!t) continue;
    let e: Json | null = null;
    try {
      e = t.startsWith("{") ? obj(JSON.parse(t)) : null;
    } catch {
      e = null;
    }
    if (!e) {
      lines.push(sanitizeLine(t, 300));
      continue;
    }
    events++;
    const line = eventLine(e, turn);
    if (line) lines.push(line);
  }
  return events ? lines : null;
}
