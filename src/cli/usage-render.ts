import type { Cost } from "../usage/cost.ts";
import type { UsageTotals } from "../usage/report.ts";
import { table } from "./job-format.ts";

const BAR_WIDTH = 24;

const count = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1000)}k` : String(n);
const share = (s: number | null) => (s === null ? "-" : `${Math.round(s * 100)}%`);

/** A cost with its state beside the figure: a zero is never shown without saying why. */
function costText(c: Cost): string {
  if (c.state === "unknown") return "unknown";
  if (c.state === "included") return "included";
  const usd = `$${(c.usd ?? 0).toFixed(c.usd !== null && c.usd < 1 ? 4 : 2)}`;
  return c.state === "partial" ? `${usd} partial` : `${usd} priced`;
}

/** The report as a table; in a terminal, with a bar of each group's tokens. */
export function renderUsage(
  r: { since: string; by: string; groups: UsageTotals[]; total: UsageTotals },
  tty: boolean,
): string {
  if (r.groups.length === 0) return `no delegations or jobs recorded since ${r.since}\n`;
  const size = (g: UsageTotals) => g.input_tokens + g.cache_read + g.cache_write + g.output_tokens;
  const most = Math.max(...r.groups.map(size), 1);
  const head = [r.by.toUpperCase(), "RUNS", "IN", "CACHED", "CACHE HIT", "OUT", "COST"];
  const row = (g: UsageTotals) => [
    g.key,
    String(g.runs),
    count(g.input_tokens),
    count(g.cache_read),
    share(g.cache_hit_share),
    count(g.output_tokens),
    costText(g.cost),
  ];
  const rows = r.groups.map((g) => {
    const cells = row(g);
    if (tty) cells.push("█".repeat(Math.max(1, Math.round((size(g) / most) * BAR_WIDTH))));
    return cells;
  });
  const lines = table([tty ? [...head, ""] : head, ...rows, row(r.total)]);
  return `since ${r.since}\n${lines}\n`;
}
