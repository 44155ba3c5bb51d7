import type { FailureKind } from "../../errors.ts";
import type { JobRow } from "../../store/types.ts";
import { isTerminal } from "../../store/types.ts";
import { sanitizeJson, sanitizeLine, shortenResponse } from "../../sys/sanitize.ts";
import { judgeJob } from "./display-state.ts";
import type { Liveness } from "./liveness.ts";

/** Runs shorter than this usually mean the CLI refused or crashed early. */
const VERY_SHORT_RUN_S = 45;

export interface PollView {
  id: string;
  provider: string;
  status: string;
  queue_reason: string | null;
  workdir: string;
  model: string | null;
  effort: string | null;
  elapsed_s: number | null;
  queued_s: number;
  final_response: string | null;
  truncated?: true;
  final_response_length?: number;
  retry_count: number;
  retry_in_s: number | null;
  last_activity_age_s: number | null;
  exit_code: number | null;
  failure_kind: FailureKind | null;
  session_id: string | null;
  usage: unknown;
  owner: { pid: number | null; sid: string | null; alive: boolean };
  /** The job belongs to another server: visible, but only its owner runs or stops it. */
  read_only?: true;
  warnings: unknown[];
  persist_error: string | null;
  very_short_run: boolean;
  empty_response: boolean;
  /** A jailed job: what it added, changed and deleted, measured by dl (a capped list, whole counts). */
  files_changed?: unknown;
  /** A jailed job: what dl kept read-only, and that the job committed nothing. */
  kept_read_only?: unknown;
}

const secs = (ms: number) => Math.round(ms / 100) / 10;

function parseJson(s: string | null): unknown {
  if (!s) return null;
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

/**
 * The model-facing shape of a row: computed ages, the response cut to ~300 words, every
 * string from the child sanitized. `ownerAlive` comes from the caller (identity check).
 */
export function pollView(
  row: JobRow,
  now: number,
  /** The owner's liveness (and, for an orphan, its child's: jobLiveness); a boolean means no child was looked at. */
  liveness: boolean | Liveness,
  selfServerId?: string,
  persistError?: string,
): PollView {
  const terminal = isTerminal(row.status);
  const end = row.ended_at ?? now;
  const runMs = row.started_at !== null ? end - row.started_at : null;
  const resp = row.final_response !== null ? shortenResponse(row.final_response) : null;
  const warnings = parseJson(row.warnings);
  // A dead server's row reads as it will be recorded (dl wait says the same), not as the
  // queued or running it still says until a reap ends it.
  const live: Liveness = typeof liveness === "boolean" ? { owner: liveness, child: null } : liveness;
  const ownerAlive = live.owner;
  // How it reads in every command (display-state.ts); a poll never says "waiting".
  const status = terminal || ownerAlive ? row.status : judgeJob(row, live).state;
  const view: PollView = {
    id: row.id,
    provider: row.provider,
    status,
    queue_reason: status === "queued" ? row.queue_reason : null,
    workdir: sanitizeLine(row.workdir, 4000),
    model: row.model,
    effort: row.effort,
    elapsed_s: runMs === null ? null : secs(runMs),
    queued_s: secs((row.started_at ?? row.ended_at ?? now) - row.created_at),
    final_response: resp ? resp.text : null,
    retry_count: row.retry_count,
    retry_in_s: row.status === "queued" && row.retry_at !== null ? Math.max(0, secs(row.retry_at - now)) : null,
    last_activity_age_s: row.last_activity_at !== null && !terminal ? secs(now - row.last_activity_at) : null,
    exit_code: row.exit_code,
    failure_kind: row.failure_kind,
    session_id: row.session_id === null ? null : sanitizeLine(row.session_id, 128),
    usage: sanitizeJson(parseJson(row.usage)),
    owner: { pid: row.owner_pid, sid: row.server_id, alive: ownerAlive },
    warnings: Array.isArray(warnings) ? (sanitizeJson(warnings) as unknown[]) : [],
    // Once the row shows the end (a late write landed), the row is the record.
    persist_error: terminal ? row.persist_error : (persistError ?? row.persist_error),
    very_short_run: terminal && runMs !== null && runMs < VERY_SHORT_RUN_S * 1000,
    empty_response: terminal && row.status === "done" && !(row.final_response ?? "").trim(),
  };
  const changes = jsonColumn(row.changes);
  if (changes.files_changed) view.files_changed = sanitizeJson(changes.files_changed);
  if (changes.kept_read_only) view.kept_read_only = sanitizeJson(changes.kept_read_only);
  if (resp?.truncated) {
    view.truncated = true;
    view.final_response_length = resp.length;
  }
  // Read-only: neither this server's nor queued by it (a job its supervisor runs is still the window's).
  if (selfServerId !== undefined && row.server_id !== selfServerId && row.origin_id !== selfServerId)
    view.read_only = true;
  return view;
}

export function unknownView(id: string): { id: string; status: "unknown"; error: string } {
  return {
    id: sanitizeLine(id, 64),
    status: "unknown",
    error: "no job with this id in this provider's state dir (wrong provider, or pruned by dl reap)",
  };
}

/** A JSON column of a row read back as an object; null, corrupt or non-object JSON is {}. */
export function jsonColumn(s: string | null | undefined): Record<string, unknown> {
  if (!s) return {};
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
