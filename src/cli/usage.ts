import { defineCommand } from "citty";
import { isDlError } from "../errors.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { type PriceTable, priceTable } from "../usage/cost.ts";
import { readLedger } from "../usage/ledger.ts";
import { parseSince, USAGE_GROUPS, type UsageGroupBy, usageReport } from "../usage/report.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { localTime } from "./time-format.ts";
import { renderUsage } from "./usage-render.ts";

const def = defineCommand({
  meta: {
    name: "usage",
    description:
      "Tokens and cost of delegations and jobs, by model, project, day or kind (exit 2 bad flag or price file)",
  },
  args: {
    since: {
      type: "string",
      valueHint: "AGE",
      default: "7d",
      description: "How far back: 30m, 24h, 7d, 2w (default 7d)",
    },
    by: { type: "enum", options: [...USAGE_GROUPS], default: "model", description: "Group by (default model)" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout" },
  },
  run({ args }) {
    const config = configOrExit();
    const back = parseSince(String(args.since));
    if (back === null) {
      process.stderr.write(
        `dl usage: --since must look like 30m, 24h, 7d or 2w, got ${JSON.stringify(String(args.since).slice(0, 20))}; e.g. dl usage --since 30d\n`,
      );
      process.exitCode = EXIT.usage;
      return;
    }
    let prices: PriceTable;
    try {
      prices = priceTable(config.usage.pricesFile);
    } catch (e) {
      process.stderr.write(`dl usage: ${isDlError(e) ? e.message : String(e)}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    const since = Date.now() - back;
    const { rows, problems } = readLedger(knownJobStores(config.paths), since);
    const by = args.by as UsageGroupBy;
    const report = usageReport(rows, by, prices, config.usage.flatRateModels);
    const out = { since: new Date(since).toISOString(), by, ...report, unreadable_stores: problems };
    const sinceText = `${String(args.since)} ago (${localTime(since)})`;
    process.stdout.write(
      args.json
        ? `${JSON.stringify(out)}\n`
        : renderUsage(out, process.stdout.isTTY === true, sinceText, config.settings.file),
    );
    for (const p of problems) process.stderr.write(`dl usage: cannot read ${p}; run dl status for the store's state\n`);
    process.exitCode = problems.length ? EXIT.failure : EXIT.ok;
  },
});

export const usageCommand: DlCommand = {
  def,
  examples: ["dl usage", "dl usage --since 30d --by project", "dl usage --by day --json | jq .total"],
};
