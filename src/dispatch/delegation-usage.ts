import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { describeError } from "../errors.ts";
import { resolveWorkspace } from "../jobs/engine/workspace.ts";
import { log } from "../log.ts";
import { type Cost, costOf, loadPrices, type PriceTable } from "../usage/cost.ts";
import { DELEGATION_ID_PREFIX } from "../usage/job-id.ts";
import { recordDelegationUsage } from "../usage/ledger.ts";
import type { DelegationResult, PreparedDelegation } from "./run-delegation.ts";

/** The price table, read once per process; a bad file prices nothing (and says so once). */
let prices: { file: string | undefined; table: PriceTable } | undefined;
function priceTable(config: Config): PriceTable {
  if (prices && prices.file === config.usage.pricesFile) return prices.table;
  let table: PriceTable = new Map();
  try {
    table = loadPrices(config.usage.pricesFile);
  } catch (e) {
    log.warn(`${describeError(e)}; costs read unknown`);
  }
  prices = { file: config.usage.pricesFile, table };
  return table;
}

/** What a delegation's tokens cost, in one of the cost states (usage-cost.ts). */
export function delegationCost(config: Config, r: DelegationResult): Cost {
  const tokens = {
    input_tokens: r.usage.input_tokens,
    cache_read: r.usage.cache_read_tokens,
    cache_write: r.usage.cache_write_tokens,
    output_tokens: r.usage.output_tokens,
  };
  return costOf(r.model_used || r.model, tokens, priceTable(config), config.usage.flatRateModels);
}

/** Records one finished synchronous delegation in the usage ledger (the agent store). */
export async function recordDelegation(
  config: Config,
  p: PreparedDelegation,
  r: DelegationResult,
  o: { kind: string; id: string | null; elapsedMs: number },
): Promise<void> {
  const project = (await resolveWorkspace(p.workdir, config.childEnv)).project;
  recordDelegationUsage(config.paths.stateDirs.agent, {
    id: o.id ?? `${DELEGATION_ID_PREFIX}${randomBytes(5).toString("hex")}`,
    kind: o.kind,
    at: Date.now(),
    project,
    model_requested: r.failed_over_from ?? p.model,
    model_used: r.model_used,
    input_tokens: r.usage.input_tokens,
    cache_read: r.usage.cache_read_tokens,
    cache_write: r.usage.cache_write_tokens,
    output_tokens: r.usage.output_tokens,
    elapsed_ms: Math.round(o.elapsedMs),
    outcome: r.success ? "done" : r.stop_reason,
  });
}
