import { redactedTail, sanitizeLine, sanitizeMultiline, TEXT_CAP } from "../../../sys/sanitize.ts";

/**
 * What `agy -p … --output-format json` printed, turned into a job result. No real agy can
 * run here, so this follows the Gemini CLI's JSON mode: one object
 * `{"response": string, "session_id"?: string, "stats"?: {models: {<name>: {tokens}}}}`,
 * or `{"error": {type, message, code}}`; `conversation_id` and a flat `usage` object are
 * accepted too. Fixtures in test/fixture/agy/ pin each shape: a capture of the real CLI
 * that differs is one new fixture and a change here, nowhere else.
 */

interface GeminiUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  thoughts_tokens?: number;
}

type AgyFailureKind = "auth" | "bad_output" | "cli_error";

export type AgyOutcome =
  | { status: "done"; response: string; conversation_id: string | null; usage: GeminiUsage | null; exit_code: 0 }
  | {
      status: "failed";
      failure_kind: AgyFailureKind;
      /** One line for a person or a model: what went wrong. */
      error: string;
      /** A sanitized piece of what the CLI printed (stderr first), for diagnosis. */
      excerpt: string;
      response: string | null;
      conversation_id: string | null;
      usage: GeminiUsage | null;
      exit_code: number | null;
    };

export interface AgyRun {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string | null;
}

/** The response a model gets back can be long, but not unbounded. */
const AGY_RESPONSE_CAP = 100_000;
const AUTH_TEXT = /\b(not signed in|sign in|log ?in|unauthenticated|unauthorized|credentials?|keychain|oauth)\b/i;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A token count as a safe non-negative integer; undefined when it is not a number at all. */
export function tokenCount(v: unknown): number | undefined {
  const n = typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n)) return undefined;
  return Math.min(Math.max(Math.floor(n), 0), Number.MAX_SAFE_INTEGER);
}

function firstCount(o: Json, keys: string[]): number | undefined {
  for (const k of keys) {
    const n = tokenCount(o[k]);
    if (n !== undefined) return n;
  }
  return undefined;
}

const addSafe = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER);

function usageFrom(counts: Array<number | undefined>): GeminiUsage | null {
  const [input, output, total, cached, thoughts] = counts;
  if (input === undefined && output === undefined && total === undefined) return null;
  const usage: GeminiUsage = {
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    total_tokens: total ?? addSafe(input ?? 0, output ?? 0),
  };
  if (cached !== undefined) usage.cached_tokens = cached;
  if (thoughts !== undefined) usage.thoughts_tokens = thoughts;
  return usage;
}

/** A flat usage object, in snake_case (OpenAI-like) or the Gemini API's camelCase. */
function flatUsage(u: Json): GeminiUsage | null {
  return usageFrom([
    firstCount(u, ["input_tokens", "prompt_tokens", "promptTokenCount", "input", "prompt"]),
    firstCount(u, ["output_tokens", "completion_tokens", "candidatesTokenCount", "output", "candidates"]),
    firstCount(u, ["total_tokens", "totalTokenCount", "total"]),
    firstCount(u, ["cached_tokens", "cachedContentTokenCount", "cached"]),
    firstCount(u, ["thoughts_tokens", "thoughtsTokenCount", "reasoning_tokens", "thoughts"]),
  ]);
}

/** The Gemini CLI's `stats.models.<name>.tokens`, summed over every model the run used. */
function statsUsage(stats: Json): GeminiUsage | null {
  if (!isObject(stats.models)) return null;
  const sums: Array<number | undefined> = [undefined, undefined, undefined, undefined, undefined];
  for (const m of Object.values(stats.models)) {
    if (!isObject(m) || !isObject(m.tokens)) continue;
    const t = flatUsage(m.tokens);
    if (!t) continue;
    const parts = [t.input_tokens, t.output_tokens, t.total_tokens, t.cached_tokens, t.thoughts_tokens];
    parts.forEach((n, i) => {
      if (n !== undefined) sums[i] = addSafe(sums[i] ?? 0, n);
    });
  }
  return usageFrom(sums);
}

function usageOf(o: Json): GeminiUsage | null {
  if (isObject(o.usage)) return flatUsage(o.usage);
  if (isObject(o.usageMetadata)) return flatUsage(o.usageMetadata);
  return isObject(o.stats) ? statsUsage(o.stats) : null;
}

function conversationIdOf(o: Json): string | null {
  for (const k of ["conversation_id", "session_id", "conversationId", "sessionId"]) {
    const v = o[k];
    if (typeof v === "string" && v.trim()) return sanitizeLine(v, 128);
  }
  return null;
}

/** The JSON object on stdout: the whole text, or from the last line that opens an object. */
function extractJsonObject(stdout: string): Json | null {
  const text = stdout.trim();
  const tryParse = (s: string) => {
    try {
      const v: unknown = JSON.parse(s);
      return isObject(v) ? v : null;
    } catch {
      return null;
    }
  };
  const whole = tryParse(text);
  if (whole || !text) return whole;
  // Some CLIs print a notice line before the JSON ("Loaded cached credentials.").
  const at = text.lastIndexOf("\n{");
  return at >= 0 ? tryParse(text.slice(at + 1)) : null;
}

function excerptOf(run: AgyRun): string {
  const err = run.stderr.trim();
  // Errors are at the end of stderr; on stdout the beginning says what the text was. Both
  // are redacted before they are cut, never a key's half kept (sanitize.ts).
  return sanitizeLine(err ? redactedTail(err, 2000) : run.stdout.trim(), TEXT_CAP);
}

function failed(run: AgyRun, kind: AgyFailureKind, error: string, o: Json | null): AgyOutcome {
  const authText = `${run.stderr}\n${error}`;
  const auth = kind === "auth" || (kind === "cli_error" && AUTH_TEXT.test(authText));
  return {
    status: "failed",
    failure_kind: auth ? "auth" : kind,
    error: auth
      ? "agy session not readable in the jail: run `agy` once outside dl to sign in, then submit again"
      : error,
    excerpt: excerptOf(run),
    response: o && typeof o.response === "string" ? sanitizeMultiline(o.response, AGY_RESPONSE_CAP) : null,
    conversation_id: o ? conversationIdOf(o) : null,
    usage: o ? usageOf(o) : null,
    exit_code: run.exitCode,
  };
}

function errorMessageOf(o: Json): string | null {
  const e = o.error;
  if (typeof e === "string") return sanitizeLine(e, TEXT_CAP);
  if (!isObject(e)) return null;
  const msg = typeof e.message === "string" ? e.message : "unknown error";
  const type = typeof e.type === "string" ? `${e.type}: ` : "";
  return sanitizeLine(`${type}${msg}`, TEXT_CAP);
}

export function parseAgyOutput(run: AgyRun): AgyOutcome {
  const o = extractJsonObject(run.stdout);
  if (run.exitCode !== 0) {
    const how = run.exitCode === null ? `agy was killed by ${run.signal ?? "a signal"}` : `agy exited ${run.exitCode}`;
    const msg = o ? errorMessageOf(o) : null;
    return failed(run, "cli_error", msg ? `${how}: ${msg}` : how, o);
  }
  if (!o) return failed(run, "bad_output", "agy printed no JSON object (expected --output-format json)", null);
  const msg = errorMessageOf(o);
  if (msg) return failed(run, AUTH_TEXT.test(msg) ? "auth" : "cli_error", `agy reported an error: ${msg}`, o);
  if (typeof o.response !== "string") return failed(run, "bad_output", "agy's JSON has no response text", o);
  return {
    status: "done",
    response: sanitizeMultiline(o.response, AGY_RESPONSE_CAP),
    conversation_id: conversationIdOf(o),
    usage: usageOf(o),
    exit_code: 0,
  };
}
