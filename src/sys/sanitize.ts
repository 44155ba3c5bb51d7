import { redact } from "./redact.ts";
import { ANSI } from "./terminal-codes.ts";

/**
 * Output hygiene for everything a job's child wrote that reaches a terminal (wait
 * lines) or a model (poll JSON). A CLI's output is untrusted: ANSI escapes can rewrite
 * a terminal, bidi overrides (U+202E) can make text read differently from what it is,
 * NUL and line separators break line-oriented readers. Every cleaner redacts
 * (sys/redact.ts) before it cuts: half a key is no longer a key the channels recognize.
 */

export const TEXT_CAP = 256;
export const PREVIEW_CAP = 110;
const JSON_STRING_CAP = 4000;
const RESPONSE_WORDS = 300;
const RESPONSE_CHARS = 4000;

// C0/C1 controls and DEL; Unicode format characters (Cf: zero-width, bidi embeddings,
// overrides and isolates, BOM, soft hyphen…); line and paragraph separators.
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
// Same as UNSAFE minus "\n", for multi-line fields.
const UNSAFE_KEEP_NL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\p{Cf}\u2028\u2029]/gu;

function cut(s: string, cap: number): string {
  if (s.length <= cap) return s;
  // Never split a surrogate pair.
  let end = cap - 1;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${s.slice(0, end)}…`;
}

/** The rest of a word at a cut (a key is one word of at most 4096 characters; a word ends where JSON or a shell ends it). */
const WORD_REST = /[^\s"'`,;{}[\]()<>]{0,4096}/y;

/**
 * The first `max` characters of `s`, redacted (so a 1 MB line costs no more than a short
 * one), and the rest of the word the slice cuts: part of a key is no key the redaction
 * recognizes, and collapsing the white space before it would pull it inside the cap.
 */
function redactedHead(s: string, max: number): string {
  if (s.length <= max) return redact(s);
  WORD_REST.lastIndex = max;
  const end = max + (WORD_REST.exec(s)?.[0].length ?? 0);
  return redact(s.slice(0, end));
}

/** A character a key is made of: a word ends where white space, JSON or a shell ends it (WORD_REST). */
const isWordChar = (c: string) => !/[\s"'`,;{}[\]()<>]/.test(c);
const LEADING_WORD = /^[^\s"'`,;{}[\]()<>]+/;
/** Characters before a tail's cut also read, so a key that starts before the cut is found whole. */
const TAIL_MARGIN = 4096;

/**
 * The last `max` characters of `s`, redacted. The read starts a margin before the cut, and
 * the word it starts inside is dropped: part of a key is no key the redaction recognizes,
 * and what redaction cuts out after it shrinks the text, which would pull that part inside
 * `max`.
 */
export function redactedTail(s: string, max: number): string {
  if (s.length <= max) return redact(s); // whole: nothing is cut
  const start = Math.max(0, s.length - max - TAIL_MARGIN);
  let clean = redact(s.slice(start));
  if (start > 0 && isWordChar(s[start - 1]!)) clean = clean.replace(LEADING_WORD, "");
  return `…${clean.length > max ? clean.slice(-max) : clean}`;
}

/** One safe line: unsafe characters become spaces, whitespace collapses, capped. */
export function sanitizeLine(s: string, cap = TEXT_CAP): string {
  // Cap the input first so a 1 MB line costs no more than a short one.
  const head = redactedHead(s, cap * 8);
  return cut(head.replace(ANSI, " ").replace(UNSAFE, " ").replace(/\s+/g, " ").trim(), cap);
}

/**
 * A multi-line text for JSON: same cleaning but newlines survive (a model reads a
 * response better with its paragraphs), runs of blank lines and spaces collapse.
 */
export function sanitizeMultiline(s: string, cap = JSON_STRING_CAP): string {
  const head = redactedHead(s, cap * 8);
  const clean = head
    .replace(/\r\n?/g, "\n")
    .replace(ANSI, " ")
    .replace(UNSAFE_KEEP_NL, " ")
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n ?/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return cut(clean, cap);
}

/**
 * A preformatted block (a diff stat) for JSON: same cleaning, but spaces and line breaks
 * stay where they are, since the alignment carries the meaning.
 */
export function sanitizeBlock(s: string, cap = JSON_STRING_CAP): string {
  const head = redactedHead(s, cap * 8);
  return cut(head.replace(/\r\n?/g, "\n").replace(ANSI, " ").replace(UNSAFE_KEEP_NL, " ").trimEnd(), cap);
}

/** Every string in a JSON value (keys too), at any depth, as a safe capped line. */
export function sanitizeJson(v: unknown, cap = JSON_STRING_CAP, depth = 0): unknown {
  if (typeof v === "string") return sanitizeLine(v, cap);
  if (v === null || typeof v === "number" || typeof v === "boolean") return v;
  if (depth > 16) return null; // hostile nesting: stop, do not recurse for ever
  if (Array.isArray(v)) return v.slice(0, 1000).map((x) => sanitizeJson(x, cap, depth + 1));
  if (typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>).slice(0, 1000)) {
      out[sanitizeLine(k, 128)] = sanitizeJson(x, cap, depth + 1);
    }
    return out;
  }
  return null;
}

export interface ShortResponse {
  text: string;
  truncated: boolean;
  /** Full character count of the original. */
  length: number;
}

/** A final response cut to about 300 words / 4000 characters, cleaned. */
export function shortenResponse(s: string): ShortResponse {
  const length = s.length;
  // One character over the cap tells us whether the char cap bit.
  let text = sanitizeMultiline(s, RESPONSE_CHARS + 2);
  let truncated = false;
  if (text.length > RESPONSE_CHARS) {
    text = cut(text, RESPONSE_CHARS);
    truncated = true;
  }
  const parts = text.split(/(?<=\s)/);
  let words = 0;
  for (let i = 0; i < parts.length; i++) {
    if (parts[i]!.trim() && ++words > RESPONSE_WORDS) {
      text = `${parts.slice(0, i).join("").trimEnd()} …`;
      truncated = true;
      break;
    }
  }
  return { text, truncated, length };
}

/** Characters of a child's own output kept in a failed job's response. */
const EXCERPT_CHARS = 1200;

/** The end of what a child printed (its last words explain a failure), cleaned. */
export function outputExcerpt(out: { stdout: string; stderr: string }): string {
  const joined = [out.stderr.trim(), out.stdout.trim()].filter(Boolean).join("\n");
  if (!joined) return "(no output)";
  return sanitizeMultiline(redactedTail(joined, EXCERPT_CHARS), EXCERPT_CHARS + 2);
}
