/**
 * The pure half of edit_file: where old_string occurs, what the file becomes, and the
 * line a model most likely meant when its old_string matched nothing.
 */

/** Start offsets of every non-overlapping occurrence of `needle`, left to right. */
export function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/** 1-based line number of offset `at`. */
export function lineAt(text: string, at: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** True when every line break is CRLF: a model's LF-only strings are then written as CRLF. */
export function isCrlfOnly(text: string): boolean {
  return text.includes("\r\n") && !/(^|[^\r])\n/.test(text);
}

/**
 * The edited text and, for each replacement, the lines the new text occupies, as
 * "42" or "42-44" (a deletion is reported at the line it left).
 */
export function applyEdit(text: string, at: number[], oldS: string, newS: string): { text: string; lines: string[] } {
  let out = "";
  let last = 0;
  const starts: number[] = [];
  for (const i of at) {
    out += text.slice(last, i);
    starts.push(out.length);
    out += newS;
    last = i + oldS.length;
  }
  out += text.slice(last);
  const span = (newS.match(/\n/g)?.length ?? 0) - (newS.endsWith("\n") ? 1 : 0);
  const lines = starts.map((s) => {
    const first = lineAt(out, s);
    return span > 0 ? `${first}-${first + span}` : String(first);
  });
  return { text: out, lines };
}

/** Lines compared at most, and characters of each: bounds the cost on a huge file. */
const NEAREST_MAX_LINES = 100_000;
const NEAREST_MAX_CHARS = 400;

/**
 * The line of `text` most like the first non-blank line of `needle`: the same after
 * trimming (an indentation slip) first, else the best bigram overlap (Dice), if any is
 * at least a third alike.
 */
export function nearestLine(text: string, needle: string): { line: number; text: string } | null {
  const want = needle
    .split(/\r?\n/)
    .find((l) => l.trim() !== "")
    ?.trim();
  if (!want) return null;
  const lines = text.split("\n", NEAREST_MAX_LINES).map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const exact = lines.findIndex((l) => l.trim() === want);
  if (exact !== -1) return { line: exact + 1, text: lines[exact]! };
  const target = bigrams(want.slice(0, NEAREST_MAX_CHARS));
  let best = -1;
  let bestScore = 1 / 3;
  for (let i = 0; i < lines.length; i++) {
    const score = dice(target, bigrams(lines[i]!.trim().slice(0, NEAREST_MAX_CHARS)));
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best === -1 ? null : { line: best + 1, text: lines[best]! };
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const b = s.slice(i, i + 2);
    m.set(b, (m.get(b) ?? 0) + 1);
  }
  return m;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let total = 0;
  let shared = 0;
  for (const n of a.values()) total += n;
  for (const [k, n] of b) {
    total += n;
    shared += Math.min(n, a.get(k) ?? 0);
  }
  return total === 0 ? 0 : (2 * shared) / total;
}
