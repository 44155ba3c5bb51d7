import type { Cost } from "../usage/cost.ts";
import type { UsageTotals } from "../usage/report.ts";
import { table } from "./job-format.ts";
import { tokenCount } from "./usage-text.ts";

const BAR_WIDTH = 24;

const count = tokenCount;
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
  sinceText: string,
  settingsFile: string,
): string {
  if (r.groups.length === 0)
    return `no delegations or jobs recorded since ${sinceText} (dl usage --since 30d looks further back)\n`;
  const size = (g: UsageTotals) => g.input_tokens + g.cache_read_tokens + g.cache_write_tokens + g.output_tokens;
  const most = Math.max(...r.groups.map(size), 1);
  const head = [r.by.toUpperCase(), "RUNS", "IN", "CACHED", "CACHE HIT", "OUT", "COST"];
  const row = (g: UsageTotals) => [
    g.key,
    String(g.runs),
    count(g.input_tokens),
    count(g.cache_read_tokens),
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
  return `since ${sinceText}, by ${r.by}\n${lines}\n${costHint(r.groups, settingsFile)}`;
}

/** Costs dl could not price say how to give it prices, once, under the table. */
function costHint(groups: readonly UsageTotals[], settingsFile: string): string {
  if (!groups.some((g) => g.cost.state === "unknown" || g.cost.state === "partial")) return "";
  return (
    `COST unknown: dl has no price for those models. Set DELEGATE_PRICES_FILE to a LiteLLM ` +
    `model_prices_and_context_window.json, and list the models you pay nothing per token for ` +
    `(local, flat-rate plans) in DELEGATE_FLAT_RATE_MODELS, in ${settingsFile}\n`
  );
}
