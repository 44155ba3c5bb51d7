/**
 * Secrets out of text dl keeps (transcripts, output tails): the values it knows (its own
 * keys) and the shapes keys take, as users actually name and paste them (`*_KEY=…`,
 * `Authorization: Bearer …`, `sk-…`). A false positive costs a few characters of a log;
 * a miss puts a key on disk.
 */
const REDACTED_TEXT = "<redacted>";

const SHAPES: readonly RegExp[] = [
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,4096}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,4096}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,4096}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,4096}/g,
  /\bAIza[0-9A-Za-z_-]{30,4096}/g,
];

/** A name that says "secret", then `=` or `:`, then the value: the value goes. */
// Every quantifier is bounded: hostile output (a megabyte of one letter) must cost linear time.
const NAMED =
  /((?:[A-Za-z0-9_]{0,40}(?:api[_-]?key|_key|token|secret|password|passwd)|authorization)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:bearer[ \t]{1,8})?)[^\s"',;&]{4,4096}/gi;
const BEARER = /(\bbearer[ \t]{1,8})[A-Za-z0-9._~+/-]{8,4096}=*/gi;

export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  // Longest first, so a key that contains another is replaced whole.
  for (const k of [...known].filter((k) => k.length >= 6).sort((a, b) => b.length - a.length))
    out = out.split(k).join(REDACTED_TEXT);
  for (const re of SHAPES) out = out.replace(re, REDACTED_TEXT);
  return out.replace(NAMED, `$1${REDACTED_TEXT}`).replace(BEARER, `$1${REDACTED_TEXT}`);
}
