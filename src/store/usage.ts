import { storageError } from "./db.ts";
import { type JobStore, stored } from "./jobs.ts";
import type { JobRow } from "./types.ts";

/** One ledger row: what a delegation or job asked for, who answered, what it cost in tokens. */
export interface UsageRow {
  id: string;
  /** delegate_to_local_agent, delegate_batch, delegate_to_provider, dl_run, or a job kind (codex, gemini, dsh, agent). */
  kind: string;
  /** When it ended (ms). */
  at: number;
  project: string;
  model_requested: string;
  /** The model the backend's reply named ("" when it named none). */
  model_used: string;
  input_tokens: number;
  cache_read: number;
  cache_write: number;
  output_tokens: number;
  elapsed_ms: number;
  outcome: string;
}

const COLS = [
  "id",
  "kind",
  "at",
  "project",
  "model_requested",
  "model_used",
  "input_tokens",
  "cache_read",
  "cache_write",
  "output_tokens",
  "elapsed_ms",
  "outcome",
] as const;

/** Records (or replaces, for the same id) one row. */
export function recordUsage(store: JobStore, row: UsageRow): void {
  const sql = `INSERT OR REPLACE INTO usage(${COLS.join(",")}) VALUES(${COLS.map(() => "?").join(",")})`;
  try {
    store.db.query(sql).run(...COLS.map((c) => stored(row[c])));
  } catch (e) {
    throw storageError("record usage", e);
  }
}

/** Rows that ended at or after `since`, oldest first. */
export function usageSince(store: JobStore, since: number): UsageRow[] {
  try {
    return store.db.query("SELECT * FROM usage WHERE at >= ? ORDER BY at").all(since) as UsageRow[];
  } catch (e) {
    throw storageError("read usage", e);
  }
}

/**
 * Jobs that ran and ended but have no ledger row. A job's end and its ledger row are two
 * writes a moment apart (the row first, so a waiter learns at once); a process killed
 * between them leaves such a job, and its reader or pruner records it.
 */
export function endedWithoutUsage(store: JobStore): JobRow[] {
  const sql = `SELECT * FROM jobs WHERE status NOT IN ('queued','running') AND started_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM usage WHERE usage.id = jobs.id) ORDER BY seq`;
  try {
    return store.db.query(sql).all() as JobRow[];
  } catch (e) {
    throw storageError("read jobs missing from the ledger", e);
  }
}
