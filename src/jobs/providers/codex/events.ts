/**
 * Reads what `codex exec --json` prints on stdout: one JSON event per line. Seen with
 * codex-cli 0.171.0 (see test/fixture/fake-responses.ts):
 *
 *   {"type":"thread.started","thread_id":"<uuid>"}
 *   {"type":"turn.started"}
 *   {"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"…"}}
 *   {"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,
 *     "cache_write_input_tokens":…,"output_tokens":…,"reasoning_output_tokens":…}}
 *   failures: {"type":"error","message":"…"} then {"type":"turn.failed","error":{"message":"…"}}
 *
 * Unknown events and lines that are not JSON are skipped: a newer CLI adding events must
 * not break the parse.
 */

interface CodexUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
  total_tokens: number;
}

export interface CodexEvents {
  /** The thread id; `codex exec resume <id>` reopens it. */
  sessionId: string | null;
  /** Text of the last agent message. */
  finalMessage: string | null;
  /** Summed over completed turns; null when no turn completed. */
  usage: CodexUsage | null;
  /** Messages of `error` / `turn.failed` events, in order, without repeats. */
  errors: string[];
  turnsCompleted: number;
  /** Items by type (command_execution, file_change, …): a rough measure of what it did. */
  items: Record<string, number>;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export function parseCodexEvents(stdout: string): CodexEvents {
  const ev: CodexEvents = {
    sessionId: null,
    finalMessage: null,
    usage: null,
    errors: [],
    turnsCompleted: 0,
    items: {},
  };
  for (const line of stdout.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    let e: Json | null;
    try {
      e = obj(JSON.parse(t));
    } catch {
      continue;
    }
    if (!e) continue;
    switch (e.type) {
      case "thread.started":
        if (typeof e.thread_id === "string") ev.sessionId = e.thread_id;
        break;
      case "item.completed": {
        const item = obj(e.item);
        if (!item) break;
        const kind = typeof item.type === "string" ? item.type : "unknown";
        ev.items[kind] = (Object.hasOwn(ev.items, kind) ? (ev.items[kind] ?? 0) : 0) + 1;
        if (kind === "agent_message" && typeof item.text === "string") ev.finalMessage = item.text;
        break;
      }
      case "turn.completed": {
        ev.turnsCompleted++;
        const u = obj(e.usage);
        if (!u) break;
        ev.usage ??= {
          input_tokens: 0,
          cached_input_tokens: 0,
          output_tokens: 0,
          reasoning_output_tokens: 0,
          total_tokens: 0,
        };
        const sum = ev.usage;
        sum.input_tokens += num(u.input_tokens);
        sum.cached_input_tokens += num(u.cached_input_tokens);
        sum.output_tokens += num(u.output_tokens);
        sum.reasoning_output_tokens += num(u.reasoning_output_tokens);
        sum.total_tokens = sum.input_tokens + sum.output_tokens;
        break;
      }
      case "error":
        addError(ev, e.message);
        break;
      case "turn.failed":
        addError(ev, obj(e.error)?.message);
        break;
    }
  }
  return ev;
}

function addError(ev: CodexEvents, m: unknown): void {
  if (typeof m !== "string" || m === "") return;
  if (ev.errors[ev.errors.length - 1] !== m) ev.errors.push(m);
}
