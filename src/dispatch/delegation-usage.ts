import { randomBytes } from "node:crypto";
import type { AgentResult } from "../agent/result.ts";
import type { Config } from "../config.ts";
import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import { resolveWorkspace } from "../sys/workspace.ts";
import { type Cost, costOf, type PriceTable, priceTable } from "../usage/cost.ts";
import { DELEGATION_ID_PREFIX } from "../usage/job-id.ts";
import { recordDelegationUsage } from "../usage/ledger.ts";

/** What the ledger reads of a finished delegation (run-delegation.ts's DelegationResult). */
type Finished = Pick<AgentResult, "usage" | "model" | "model_used" | "success" | "stop_reason"> & {
  failed_over_from?: string;
};

/** The price file that was last found bad here: said once, not on every delegation. */
let warnedFile: string | undefined;

/** The price table; a bad file prices nothing (and says so once). */
function prices(config: Config): PriceTable {
  try {
    return priceTable(config.usage.pricesFile);
  } catch (e) {
    if (warnedFile !== config.usage.pricesFile) log.warn(`${describeError(e)}; costs read unknown`);
    warnedFile = config.usage.pricesFile;
    return new Map();
  }
}

/** What a delegation's tokens cost, in one of the cost states (usage/cost.ts). */
export function delegationCost(config: Config, r: Finished): Cost {
  const tokens = {
    input_tokens: r.usage.input_tokens,
    cache_read: r.usage.cache_read_tokens,
    cache_write: r.usage.cache_write_tokens,
    output_tokens: r.usage.output_tokens,
  };
  return costOf(r.model_used || r.model, tokens, prices(config), config.usage.flatRateModels);
}

/** Records one finished synchronous delegation in the usage ledger (the agent store). */
export async function recordDelegation(
  config: Config,
  p: { workdir: string; model: string },
  r: Finished,
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
