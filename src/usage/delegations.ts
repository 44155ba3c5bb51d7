import { DELEGATIONS_PROVIDER, PROVIDERS } from "../providers.ts";
import type { UsageRow } from "../store/usage.ts";
import type { JobStateDir } from "../sys/paths.ts";
import { readLedger } from "./ledger.ts";

/**
 * Synchronous delegations (delegate_to_local_agent, each delegate_batch task,
 * delegate_to_provider, dl run) have no job row: what the shell commands know of one is
 * its ledger row (when it ended, where, on which model, its tokens and outcome) and its
 * transcript. The ledger keeps them as long as the job retention keeps jobs.
 */
const JOB_KINDS = new Set<string>(PROVIDERS.map((p) => p.name));

/** Ledger rows of delegations (not jobs), newest first. */
export function delegationRows(
  stores: readonly JobStateDir[],
  since: number,
): { rows: UsageRow[]; problems: string[] } {
  const { rows, problems } = readLedger(
    stores.filter((s) => s.provider === DELEGATIONS_PROVIDER),
    since,
  );
  return { rows: rows.filter((r) => !JOB_KINDS.has(r.kind)).sort((a, b) => b.at - a.at), problems };
}

/** One delegation's ledger row by id, or null. */
export function findDelegationRow(stores: readonly JobStateDir[], id: string): UsageRow | null {
  return delegationRows(stores, 0).rows.find((r) => r.id === id) ?? null;
}
