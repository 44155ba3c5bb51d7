import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import { DELEGATIONS_PROVIDER, factsOf } from "../providers.ts";
import { eachStore } from "../store/each-store.ts";
import { JobStore } from "../store/jobs.ts";
import { isTerminal, type JobRow } from "../store/types.ts";
import { endedWithoutUsage, recordUsage, type UsageRow, usageSince } from "../store/usage.ts";
import type { JobStateDir } from "../sys/paths.ts";
import type { Tokens } from "./cost.ts";

/**
 * The usage ledger: one row per delegation and per job, in the store of its provider
 * (synchronous delegations in the agent store), so it is shared, survives the pruning of
 * job rows, and is found wherever the stores are.
 */
function jsonColumn(s: string | null): Record<string, unknown> {
  try {
    const v = JSON.parse(s ?? "null") as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
const first = (o: Record<string, unknown>, keys: readonly string[]) =>
  n(keys.map((k) => o[k]).find((v) => v !== undefined));

/** Where a usage column keeps its counts: `usage` (an agent's result), `tokens` (a dsh result.json), or itself (a CLI's). */
function countsIn(usage: Record<string, unknown>): Record<string, unknown> {
  for (const key of ["usage", "tokens"]) {
    const v = usage[key];
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  }
  // A launcher that reports one number says how many, not of which kind: counted as input.
  if (typeof usage.tokens === "number") return { input_tokens: usage.tokens };
  return usage;
}

/**
 * Tokens from a job's usage column, whatever shape its CLI reported them in. A CLI that
 * counts cached tokens inside the input (PROVIDERS' cachedInsideInput, OpenAI's
 * accounting) has them taken out: the ledger keeps them apart.
 */
function tokensOf(provider: string, usage: Record<string, unknown>): Tokens {
  const u = countsIn(usage);
  const cache_read = first(u, [
    "cache_read_tokens",
    "cached_input_tokens",
    "cached_tokens",
    "cache_read_input_tokens",
    "cache_read",
    "cached",
  ]);
  const rawIn = first(u, ["input_tokens", "prompt_tokens", "input", "prompt"]);
  return {
    input_tokens: factsOf(provider)?.cachedInsideInput ? Math.max(0, rawIn - cache_read) : rawIn,
    cache_read,
    cache_write: first(u, ["cache_write_tokens", "cache_creation_input_tokens", "cache_write"]),
    output_tokens: first(u, ["output_tokens", "completion_tokens", "output", "completion"]),
  };
}

/** A finished job's ledger row. */
function jobUsageRow(row: JobRow): UsageRow {
  const usage = jsonColumn(row.usage);
  const used = typeof usage.model_used === "string" ? usage.model_used : "";
  return {
    id: row.id,
    kind: row.provider,
    at: row.ended_at ?? Date.now(),
    project: row.project,
    model_requested: row.model ?? "",
    model_used: used,
    ...tokensOf(row.provider, usage),
    elapsed_ms: row.started_at !== null && row.ended_at !== null ? row.ended_at - row.started_at : 0,
    outcome: row.status,
  };
}

/** At a job's end (engine side): its row goes into the ledger. Never fails the job. */
export function recordJobEnd(store: JobStore, id: string): void {
  try {
    const row = store.get(id);
    if (row && isTerminal(row.status)) recordUsage(store, jobUsageRow(row));
  } catch (e) {
    log.warn(`usage of job ${id} not recorded: ${describeError(e)}`);
  }
}

/**
 * Records every job of `store` that ran and ended without reaching the ledger (its
 * process died between the two writes); returns how many. Run before reading the ledger
 * and before pruning job rows, so no run's tokens are lost with its row.
 */
export function recordUnledgeredEnds(store: JobStore): number {
  const missing = endedWithoutUsage(store);
  for (const row of missing) recordUsage(store, jobUsageRow(row));
  return missing.length;
}

/** A synchronous delegation's row, into the store that keeps delegations (the agent's). Never fails the delegation. */
export function recordDelegationUsage(stateDir: string, row: UsageRow): void {
  let store: JobStore | undefined;
  try {
    store = JobStore.open(stateDir, { provider: DELEGATIONS_PROVIDER });
    recordUsage(store, row);
  } catch (e) {
    log.warn(`usage of delegation ${row.id} not recorded: ${describeError(e)}`);
  } finally {
    store?.close();
  }
}

/** Every ledger row since `since` in the known stores, each id once. */
export function readLedger(stores: readonly JobStateDir[], since: number): { rows: UsageRow[]; problems: string[] } {
  const rows = new Map<string, UsageRow>();
  const problems: string[] = [];
  // Opened writable: an older store gets the ledger's table by its migration.
  const read = (store: JobStore) => {
    try {
      recordUnledgeredEnds(store);
    } catch (e) {
      // Best effort: a store busy past its timeout is still read; the next reader records them.
      log.warn(`jobs missing from the ledger not recorded: ${describeError(e)}`);
    }
    return usageSince(store, since);
  };
  for (const v of eachStore(stores, read)) {
    if ("value" in v) for (const r of v.value) rows.set(r.id, r);
    else if ("error" in v) problems.push(`the ${v.source.provider} store at ${v.source.stateDir}: ${v.error}`);
  }
  return { rows: [...rows.values()], problems };
}
