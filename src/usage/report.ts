import { basename, dirname } from "node:path";
import type { UsageRow } from "../store/usage.ts";
import { type Cost, costOf, type PriceTable, sumCosts } from "./cost.ts";

export const USAGE_GROUPS = ["model", "project", "day", "kind"] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];

export type UsageTotals = {
  key: string;
  runs: number;
  input_tokens: number;
  /** The same names as every result's usage (input_tokens, cache_read_tokens, …). */
  cache_read_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  /** Cached input read over all input the model saw; null with no input at all. */
  cache_hit_share: number | null;
  elapsed_s: number;
  cost: Cost;
};

/** `7d`, `24h`, `30m`, `2w`: how far back, in ms; null when it is not one of those. */
export function parseSince(s: string): number | null {
  const m = /^(\d{1,5})([mhdw])$/.exec(s.trim());
  if (!m) return null;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as "m" | "h" | "d" | "w"];
  return Number(m[1]) * unit;
}

/** The local calendar day: a person's "yesterday" is theirs, not UTC's. */
function localDay(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

function keyOf(r: UsageRow, by: UsageGroupBy): string {
  if (by === "model") return r.model_used || r.model_requested || "(unknown model)";
  if (by === "kind") return r.kind;
  if (by === "day") return localDay(r.at);
  const base = basename(r.project);
  return base === ".git" ? basename(dirname(r.project)) : base || r.project;
}

function totals(key: string, rows: readonly UsageRow[], prices: PriceTable, flat: readonly string[]): UsageTotals {
  const sum = (f: (r: UsageRow) => number) => rows.reduce((s, r) => s + f(r), 0);
  const input = sum((r) => r.input_tokens);
  const read = sum((r) => r.cache_read);
  const write = sum((r) => r.cache_write);
  const seen = input + read + write;
  return {
    key,
    runs: rows.length,
    input_tokens: input,
    cache_read_tokens: read,
    cache_write_tokens: write,
    output_tokens: sum((r) => r.output_tokens),
    cache_hit_share: seen > 0 ? Math.round((read / seen) * 1000) / 1000 : null,
    elapsed_s: Math.round(sum((r) => r.elapsed_ms) / 100) / 10,
    cost: sumCosts(rows.map((r) => costOf(r.model_used || r.model_requested, r, prices, flat))),
  };
}

/** The ledger's rows summed per group (largest first) and in total. */
export function usageReport(
  rows: readonly UsageRow[],
  by: UsageGroupBy,
  prices: PriceTable,
  flat: readonly string[],
): { groups: UsageTotals[]; total: UsageTotals } {
  const groups = new Map<string, UsageRow[]>();
  for (const r of rows) {
    const k = keyOf(r, by);
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const list = [...groups].map(([k, rs]) => totals(k, rs, prices, flat));
  list.sort((a, b) =>
    by === "day" ? a.key.localeCompare(b.key) : b.input_tokens + b.output_tokens - (a.input_tokens + a.output_tokens),
  );
  return { groups: list, total: totals("total", rows, prices, flat) };
}
