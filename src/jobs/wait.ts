import { existsSync } from "node:fs";
import { join } from "node:path";
import { DB_FILE } from "../store/db.ts";
import { JobStore } from "../store/jobs.ts";
import { isTerminal, type JobRow } from "../store/types.ts";
import type { Identities } from "./deps.ts";
import { ownerAlive } from "./reaper.ts";
import { PREVIEW_CAP, sanitizeJson, sanitizeLine } from "./sanitize.ts";

/** Exit codes of `dl wait`, as the reference documents them. */
const WAIT_EXIT = { allDone: 0, unsuccessful: 1, missing: 2, timeout: 3 } as const;
type WaitExit = (typeof WAIT_EXIT)[keyof typeof WAIT_EXIT];

export interface WaitSource {
  provider: string;
  stateDir: string;
}

export interface WaitOptions {
  /** Job ids; empty = every job queued or running when the wait starts. */
  ids: readonly string[];
  /** Print nothing until every job has ended. */
  all: boolean;
  json: boolean;
  /** Give up after this long (exit 3); undefined waits for ever. */
  timeoutMs?: number;
  /** Full re-check period when nothing changes in the stores (DELEGATE_WAIT_INTERVAL). */
  intervalMs: number;
  /** An id that is in no store after this long makes the wait exit 2. */
  appearMs?: number;
  /** How often the stores are asked whether anything changed (a cheap PRAGMA). */
  watchMs?: number;
  sources: readonly WaitSource[];
  identities: Identities;
  /** One finished line (no newline); the caller writes and flushes it. */
  write: (line: string) => void;
  now?: () => number;
  signal?: AbortSignal;
}

export interface WaitOutcome {
  code: WaitExit;
  /** Ids still not ended (timeout) or never seen (missing). */
  pending: string[];
  missing: string[];
}

const SUCCESS = new Set(["done"]);

/** The line printed when a job ends, sanitized: it goes to a terminal and to a model. */
function finishedLine(row: JobRow, status: string, json: boolean): string {
  const elapsed =
    row.started_at !== null && row.ended_at !== null ? Math.round((row.ended_at - row.started_at) / 100) / 10 : null;
  const preview = row.final_response ? sanitizeLine(row.final_response, PREVIEW_CAP) : "";
  if (json) {
    return JSON.stringify(
      sanitizeJson({
        id: row.id,
        provider: row.provider,
        status,
        exit_code: row.exit_code,
        failure_kind: row.failure_kind,
        elapsed_s: elapsed,
        session_id: row.session_id,
        preview,
      }),
    );
  }
  const parts = [row.id, status.toUpperCase(), `exit=${row.exit_code ?? "-"}`];
  if (elapsed !== null) parts.push(`${elapsed}s`);
  if (row.failure_kind) parts.push(row.failure_kind);
  return sanitizeLine(parts.join(" ") + (preview ? ` — ${preview}` : ""));
}

/** A job seen queued or running whose row was deleted (`dl reap` pruning) before its end was seen. */
function prunedLine(id: string, json: boolean): string {
  const safe = sanitizeLine(id, 64);
  return json
    ? JSON.stringify({ id: safe, status: "pruned" })
    : `${safe} PRUNED (its record was deleted before its end was seen; its outcome is unknown, check the provider's logs or run it again)`;
}

function missingLine(id: string, json: boolean): string {
  const safe = sanitizeLine(id, 64);
  return json
    ? JSON.stringify({ id: safe, status: "missing" })
    : `${safe} MISSING (no such job appeared within 30 s; check the id and the state dir overrides)`;
}

/**
 * Blocks until the jobs end. Wakes within ~watchMs of any commit to a watched store
 * (PRAGMA data_version), re-checks owners' liveness often (a dead owner means LOST at
 * once), and falls back to a full pass every intervalMs.
 */
export async function waitForJobs(o: WaitOptions): Promise<WaitOutcome> {
  const now = o.now ?? Date.now;
  const start = now();
  const appearMs = o.appearMs ?? 30_000;
  const watchMs = o.watchMs ?? 25;
  const livenessMs = Math.min(o.intervalMs, 500);
  const stores = new Map<string, JobStore>();
  const versions = new Map<string, number>();
  const openStores = () => {
    for (const s of o.sources) {
      if (stores.has(s.stateDir) || !existsSync(join(s.stateDir, DB_FILE))) continue;
      try {
        stores.set(s.stateDir, JobStore.open(s.stateDir));
      } catch {
        // Unreadable now; a later pass tries again (the server reports storage errors).
      }
    }
  };

  openStores();
  let pending: string[] = [...o.ids];
  if (pending.length === 0) for (const st of stores.values()) pending.push(...st.listActive().map((r) => r.id));
  pending = [...new Set(pending)];
  const seen = new Set<string>();
  const held: string[] = [];
  let unsuccessful = false;

  const pass = (checkOwners: boolean) => {
    const rows = new Map<string, JobRow>();
    let complete = true;
    for (const st of stores.values()) {
      try {
        for (const r of st.getMany(pending)) rows.set(r.id, r);
      } catch {
        // A store busy beyond its timeout: next pass.
        complete = false;
      }
    }
    const still: string[] = [];
    for (const id of pending) {
      const r = rows.get(id);
      if (!r) {
        // Seen before and now in no store that answered: pruned. Ending the wait here is
        // the only way it ends; the row will not come back.
        if (complete && seen.has(id)) {
          unsuccessful = true;
          const line = prunedLine(id, o.json);
          if (o.all) held.push(line);
          else o.write(line);
          continue;
        }
        still.push(id);
        continue;
      }
      seen.add(id);
      let status: string | null = isTerminal(r.status) ? r.status : null;
      if (!status && checkOwners && !ownerAlive(r, o.identities)) status = "lost";
      if (!status) {
        still.push(id);
        continue;
      }
      if (!SUCCESS.has(status)) unsuccessful = true;
      const line = finishedLine(r, status, o.json);
      if (o.all) held.push(line);
      else o.write(line);
    }
    pending = still;
  };

  const finish = (code: WaitExit, missing: string[] = []): WaitOutcome => {
    for (const line of held) o.write(line);
    for (const id of missing) o.write(missingLine(id, o.json));
    for (const st of stores.values()) st.close();
    return { code, pending, missing };
  };

  let lastFull = 0;
  let lastOwners = 0;
  for (;;) {
    const t = now();
    const known = stores.size;
    openStores();
    let changed = stores.size > known;
    for (const [dir, st] of stores) {
      try {
        const v = st.dataVersion();
        if (versions.get(dir) !== v) {
          versions.set(dir, v);
          changed = true;
        }
      } catch {
        changed = true;
      }
    }
    const owners = t - lastOwners >= livenessMs;
    if (changed || owners || t - lastFull >= o.intervalMs) {
      pass(owners);
      if (owners) lastOwners = t;
      lastFull = t;
    }
    if (pending.length === 0) return finish(unsuccessful ? WAIT_EXIT.unsuccessful : WAIT_EXIT.allDone);
    // The first deadline that applies wins.
    const missing = pending.filter((id) => !seen.has(id));
    const appearDeadline = missing.length ? start + appearMs : Infinity;
    const timeoutDeadline = o.timeoutMs !== undefined ? start + o.timeoutMs : Infinity;
    if (t >= Math.min(appearDeadline, timeoutDeadline) || o.signal?.aborted) {
      if (timeoutDeadline <= appearDeadline || o.signal?.aborted) return finish(WAIT_EXIT.timeout);
      return finish(WAIT_EXIT.missing, missing);
    }
    await Bun.sleep(Math.max(1, Math.min(watchMs, Math.min(appearDeadline, timeoutDeadline) - t)));
  }
}
