/**
 * Secrets out of text dl keeps (transcripts, output tails): the values it knows (its own
 * keys) and the shapes keys take, as users actually name and paste them (`*_KEY=…`,
 * `Authorization: Bearer …`, `sk-…`). A false positive costs a few characters of a log;
 * a miss puts a key on disk.
 */
const REDACTED_TEXT = "<redacted>";

const SHAPES: readonly RegExp[] = [
  /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
];

/** A name that says "secret", then `=` or `:`, then the value: the value goes. */
const NAMED =
  /((?:[A-Za-z0-9_]*(?:api[_-]?key|_key|token|secret|password|passwd)|authorization)["']?\s*[:=]\s*["']?(?:bearer\s+)?)[^\s"',;&]{4,}/gi;
const BEARER = /(\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*/gi;

export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  // Longest first, so a key that contains another is replaced whole.
  for (const k of [...known].filter((k) => k.length >= 6).sort((a, b) => b.length - a.length))
    out = out.split(k).join(REDACTED_TEXT);
  for (const re of SHAPES) out = out.replace(re, REDACTED_TEXT);
  return out.replace(NAMED, `$1${REDACTED_TEXT}`).replace(BEARER, `$1${REDACTED_TEXT}`);
}
