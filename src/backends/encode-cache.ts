/**
 * Memoized JSON encoding of request bodies. Every turn resends the whole conversation,
 * and re-escaping each kept 20 KB tool result on every turn was a third of dl's CPU in
 * the agent loop. So each message's wire JSON is encoded once and reused while the
 * message is unchanged, and the body is joined from those pieces.
 *
 * The output must stay byte-identical to JSON.stringify of the body objects that
 * anthropicBody/openaiBody build (test/backends/encode-cache.test.ts checks it), so a
 * cached piece is only reused when everything it was built from is still the same:
 *
 * - Messages are keyed by object identity (WeakMap: entries die with the history), and
 *   each entry keeps a flat list of what it was built from: role, the content (string or
 *   array), and for every block the block, its own keys and their values in order. The
 *   pruner rewrites tool_result.content in place and the loop appends notes with `+=`;
 *   both swap a string value, so the entry no longer matches and is rebuilt. Comparing
 *   unchanged values is cheap: they are the very same strings (pointer-equal).
 * - Nested objects (tool_use `input`, tool `input_schema`) are compared by identity:
 *   dl never mutates them after creation (tools read their input; schemas are literals).
 */
import type { Message, ToolSpec } from "./types.ts";

/** `,"cache_control":{"type":"ephemeral"}` as JSON.stringify writes it. */
const CACHE_CONTROL = '"cache_control":{"type":"ephemeral"}';

/**
 * JSON of `{...obj, cache_control: {type: "ephemeral"}}` from `json`, the JSON of
 * `{...obj}`: the new key is last, so it is spliced in before the closing brace instead
 * of re-escaping the whole object. Objects where that would not hold (own cache_control
 * or toJSON) are encoded in full.
 */
export function withCacheControl(obj: object, json: string): string {
  if (Object.hasOwn(obj, "cache_control") || Object.hasOwn(obj, "toJSON") || !json.endsWith("}")) {
    return JSON.stringify({ ...obj, cache_control: { type: "ephemeral" } });
  }
  return json === "{}" ? `{${CACHE_CONTROL}}` : `${json.slice(0, -1)},${CACHE_CONTROL}}`;
}

/** Pushes what an encoding of `m` depends on (see the file comment). */
function depsOf(m: Message, variant: number): unknown[] {
  const deps: unknown[] = [m.role, m.content, variant];
  if (typeof m.content !== "string") {
    for (const b of m.content) {
      const keys = Object.keys(b);
      deps.push(b, keys.length);
      for (const k of keys) deps.push(k, (b as Record<string, unknown>)[k]);
    }
  }
  return deps;
}

/** The same walk as depsOf, comparing instead of allocating. */
function sameDeps(deps: unknown[], m: Message, variant: number): boolean {
  if (deps[0] !== m.role || deps[1] !== m.content || deps[2] !== variant) return false;
  let i = 3;
  if (typeof m.content !== "string") {
    for (const b of m.content) {
      if (deps[i++] !== b) return false;
      const rec = b as Record<string, unknown>;
      let n = 0;
      const at = i++;
      for (const k in rec) {
        if (!Object.hasOwn(rec, k)) continue;
        if (deps[i++] !== k || deps[i++] !== rec[k]) return false;
        n++;
      }
      if (deps[at] !== n) return false;
    }
  }
  return i === deps.length;
}

/**
 * Per-message memo of an encoding `E`, valid while the message is unchanged and for one
 * `variant` (a small number standing for the options the encoding depends on).
 */
export class MessageCache<E> {
  private readonly map = new WeakMap<Message, { deps: unknown[]; value: E }>();
  constructor(private readonly build: (m: Message, variant: number) => E) {}

  get(m: Message, variant: number): E {
    const hit = this.map.get(m);
    if (hit && sameDeps(hit.deps, m, variant)) return hit.value;
    // Snapshot before building, so a build that throws leaves no entry behind.
    const deps = depsOf(m, variant);
    const value = this.build(m, variant);
    this.map.set(m, { deps, value });
    return value;
  }
}

/** Memo of the encoded tool list, keyed by the array (the loop passes the same one every turn). */
export class ToolsCache {
  private readonly map = new WeakMap<readonly ToolSpec[], { deps: unknown[]; json: string }>();
  constructor(private readonly build: (tools: readonly ToolSpec[], variant: number) => string) {}

  get(tools: readonly ToolSpec[], variant: number): string {
    const hit = this.map.get(tools);
    if (hit && sameTools(hit.deps, tools, variant)) return hit.json;
    const json = this.build(tools, variant);
    this.map.set(tools, { deps: toolDeps(tools, variant), json });
    return json;
  }
}

function toolDeps(tools: readonly ToolSpec[], variant: number): unknown[] {
  const deps: unknown[] = [variant, tools.length];
  for (const t of tools) deps.push(t, t.name, t.description, t.input_schema);
  return deps;
}

function sameTools(deps: unknown[], tools: readonly ToolSpec[], variant: number): boolean {
  if (deps[0] !== variant || deps[1] !== tools.length) return false;
  let i = 2;
  for (const t of tools) {
    if (deps[i++] !== t || deps[i++] !== t.name || deps[i++] !== t.description || deps[i++] !== t.input_schema)
      return false;
  }
  return true;
}

/**
 * A few recent encodings of a string (the system prompt): strings cannot key a WeakMap,
 * and one run passes the same string object every turn, so `===` is a pointer check.
 */
export class StringMemo {
  private readonly recent: { key: string; variant: number; value: string }[] = [];
  constructor(
    private readonly build: (s: string, variant: number) => string,
    private readonly size = 8,
  ) {}

  get(key: string, variant: number): string {
    for (const e of this.recent) if (e.key === key && e.variant === variant) return e.value;
    const value = this.build(key, variant);
    this.recent.unshift({ key, variant, value });
    if (this.recent.length > this.size) this.recent.pop();
    return value;
  }
}
