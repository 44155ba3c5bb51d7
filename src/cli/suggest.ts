/**
 * The candidate closest to what was typed, for "did you mean": edit distance (with a
 * swap of two neighbours counting as one edit, as in `stauts`), accepted only when the
 * typo is small next to the word, so a wild guess is never suggested.
 */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = editDistance(typed.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  if (!best) return undefined;
  const allowed = Math.max(1, Math.min(3, Math.ceil(Math.max(typed.length, best.name.length) / 3)));
  const prefix = best.name.startsWith(typed) || typed.startsWith(best.name);
  return best.d <= allowed || (prefix && typed.length >= 3) ? best.name : undefined;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
