import type { FailureKind } from "../errors.ts";

/** The job store's file in a state directory (here, apart from bun:sqlite, for callers that only look for it). */
export const DB_FILE = "jobs.sqlite";

/** Job statuses, spelled as the reference spells them. */
export const ACTIVE_STATUSES = ["queued", "running"] as const;
export const TERMINAL_STATUSES = [
  "done",
  "failed",
  "timeout",
  "cancelled",
  "auth_failed",
  "lost",
  "killed_on_restart",
] as const;
type ActiveStatus = (typeof ACTIVE_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type JobStatus = ActiveStatus | TerminalStatus;

export function isTerminal(s: string): s is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(s);
}

export type QueueReason =
  | "global_cap"
  | "adaptive_cap"
  | "workspace_busy"
  | "waiting_for_slot"
  | "throttle_cooldown"
  | "auth_failed";

/** One row of the `jobs` table, as stored (JSON columns still strings). */
export interface JobRow {
  seq: number;
  id: string;
  provider: string;
  status: JobStatus;
  queue_reason: QueueReason | null;
  project: string;
  workdir: string;
  workspace_root: string;
  model: string | null;
  effort: string | null;
  task: string;
  /** Provider-specific task fields (sandbox, …) as JSON. */
  params: string | null;
  timeout_s: number | null;
  owner_pid: number | null;
  owner_start: string | null;
  server_id: string | null;
  child_pid: number | null;
  child_pgid: number | null;
  child_start: string | null;
  child_cmd: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  last_activity_at: number | null;
  exit_code: number | null;
  /** Why it did not succeed (errors.ts FAILURE_KINDS), or null. */
  failure_kind: FailureKind | null;
  final_response: string | null;
  /** JSON object. */
  usage: string | null;
  session_id: string | null;
  retry_count: number;
  retry_at: number | null;
  /** JSON array of strings. */
  warnings: string | null;
  persist_error: string | null;
  /** JSON object: what a jailed run changed and what stayed read-only (sandbox/tree-report.ts). */
  changes: string | null;
  /** The server that took the call (its window): set at submit, kept when a supervisor adopts the job. */
  origin_id: string | null;
  origin_pid: number | null;
  origin_start: string | null;
}

/** What a submit writes; everything else starts null / 0. */
export type NewJob = Pick<
  JobRow,
  "id" | "provider" | "project" | "workdir" | "workspace_root" | "task" | "created_at"
> &
  Partial<
    Pick<
      JobRow,
      | "status"
      | "queue_reason"
      | "model"
      | "effort"
      | "params"
      | "timeout_s"
      | "owner_pid"
      | "owner_start"
      | "server_id"
      | "warnings"
      | "origin_id"
      | "origin_pid"
      | "origin_start"
    >
  >;

/** Columns an update may change (never seq or id). */
export type JobPatch = Partial<Omit<JobRow, "seq" | "id">>;
