/**
 * Token counts as a person reads them: 1234 → 1.2k, 3456789 → 3.5M; and a job's usage
 * (whatever shape its CLI reported) as one line: "12.3k in (8.0k cached), 1.2k out".
 */
export function tokenCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

const num = (o: Record<string, unknown>, keys: readonly string[]): number | null => {
  for (const k of keys) if (typeof o[k] === "number" && Number.isFinite(o[k])) return o[k] as number;
  return null;
};

/** The usage of a job or delegation in one line, or null when it names no token count. */
export function usageLine(usage: unknown): string | null {
  if (!usage || typeof usage !== "object") return null;
  const top = usage as Record<string, unknown>;
  const u = top.usage && typeof top.usage === "object" ? (top.usage as Record<string, unknown>) : top;
  const input = num(u, ["input_tokens", "prompt_tokens"]);
  const out = num(u, ["output_tokens", "completion_tokens"]);
  const cached = num(u, ["cache_read_tokens", "cached_input_tokens", "cached_tokens", "cache_read"]);
  if (input === null && out === null) return null;
  const parts = [
    `${tokenCount(input ?? 0)} in${cached ? ` (${tokenCount(cached)} cached)` : ""}`,
    `${tokenCount(out ?? 0)} out`,
  ];
  const turns = num(top, ["turns"]);
  if (turns !== null) parts.push(`${turns} turn(s)`);
  return parts.join(", ");
}
