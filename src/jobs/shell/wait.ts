import { factsOf } from "../../providers.ts";
import { isTerminal, type JobRow } from "../../store/types.ts";
import type { JobStateDir } from "../../sys/paths.ts";
import { PREVIEW_CAP, sanitizeJson, sanitizeLine } from "../../sys/sanitize.ts";
import { judgeJob } from "../engine/display-state.ts";
import { jobLiveness, type Liveness } from "../engine/liveness.ts";
import type { Identities } from "../engine/machine.ts";
import type { OrphanHandOver } from "./hand-over.ts";
import { type UnusableStore, WatchedStores } from "./watched-stores.ts";

/** Exit codes of `dl wait`, as the reference documents them. */
export const WAIT_EXIT = { allDone: 0, unsuccessful: 1, missing: 2, timeout: 3 } as const;
type WaitExit = (typeof WAIT_EXIT)[keyof typeof WAIT_EXIT];

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
  sources: readonly JobStateDir[];
  identities: Identities;
  /** One finished line (no newline); the caller writes and flushes it. */
  write: (line: string) => void;
  now?: () => number;
  signal?: AbortSignal;
  /**
   * Runs each pass over the stores (synchronous SQLite calls that may block): the CLI
   * lets a signal end the process at once meanwhile. Default: runs it as it is.
   */
  blocking?: <T>(fn: () => T) => T;
  /**
   * Hands a waited-for queued job whose server died to a supervisor of its own (the CLI:
   * hand-over.ts), so it runs although no server of its store is left. Absent, the wait
   * goes on until some server or supervisor of the store takes it.
   */
  handOver?: OrphanHandOver;
}

export interface WaitOutcome {
  code: WaitExit;
  /** Ids still not ended (timeout) or never seen (missing). */
  pending: string[];
  missing: string[];
  /** Stores that could not be read when the wait ended (their jobs could not be seen). */
  unusable: UnusableStore[];
}

const SUCCESS = new Set(["done"]);

/** The line printed when a job ends, sanitized: it goes to a terminal and to a model. */
function finishedLine(row: JobRow, status: string, json: boolean, reason = ""): string {
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
        ...(reason ? { reason } : {}),
      }),
    );
  }
  const parts = [row.id, status.toUpperCase(), `exit=${row.exit_code ?? "-"}`];
  if (elapsed !== null) parts.push(`${elapsed}s`);
  if (row.failure_kind) parts.push(row.failure_kind);
  if (reason) parts.push(`(${reason})`);
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
    : `${safe} MISSING (no such job appeared within 30 s; check the id and the state dir overrides: dl jobs lists every job this machine's stores hold)`;
}

/** What is wrong with each unusable store, naming the variable that moves it. */
export function describeUnusable(stores: readonly UnusableStore[]): string {
  return stores
    .map((u) => {
      const env = factsOf(u.provider)?.stateEnv;
      return `the ${u.provider} job store cannot be used: ${u.reason} (at ${u.stateDir}${env ? `; see ${env}` : ""})`;
    })
    .join("; ");
}

/** An id in no readable store while some store cannot be read: it may be there, unseen. */
function unreadableLine(id: string, stores: readonly UnusableStore[], json: boolean): string {
  const safe = sanitizeLine(id, 64);
  if (json) {
    return JSON.stringify(
      sanitizeJson({
        id: safe,
        status: "unreadable",
        stores: stores.map((u) => ({ provider: u.provider, state_dir: u.stateDir, error: u.reason })),
      }),
    );
  }
  return sanitizeLine(
    `${safe} UNREADABLE (${describeUnusable(stores)}; dl wait cannot see this job: fix the store and wait again)`,
    1024,
  );
}

/** A job whose wait is over: its row and final status, or an id whose row was pruned. */
export type EndedJob = { id: string; row: JobRow; status: string; reason?: string } | { id: string; pruned: true };

/**
 * One pass's verdict on the pending ids, given the rows just read. `seen` holds every id
 * that ever had a row (this pass's included); `liveness` is set on passes that check
 * owners: a running job of a dead owner ends the wait at once, read as every other
 * command reads it (display-state.ts: what dl reap will record, and why). A queued job
 * of a dead owner never started: it stays pending, and is listed in `adrift` for the
 * wait to hand to a supervisor of its own.
 */
export function judgePending(
  pending: readonly string[],
  read: { rows: ReadonlyMap<string, JobRow>; complete: boolean },
  seen: ReadonlySet<string>,
  liveness: ((r: JobRow) => Liveness) | null,
): { ended: EndedJob[]; still: string[]; adrift: JobRow[] } {
  const ended: EndedJob[] = [];
  const still: string[] = [];
  const adrift: JobRow[] = [];
  for (const id of pending) {
    const row = read.rows.get(id);
    if (!row) {
      // Seen before and now in no store that answered: pruned. Ending the wait here is
      // the only way it ends; the row will not come back.
      if (read.complete && seen.has(id)) ended.push({ id, pruned: true });
      else still.push(id);
      continue;
    }
    if (isTerminal(row.status)) {
      ended.push({ id, row, status: row.status });
      continue;
    }
    const verdict = liveness ? judgeJob(row, liveness(row)) : null;
    if (verdict?.orphaned && verdict.state !== "queued")
      ended.push({ id, row, status: verdict.state, reason: verdict.reason });
    else still.push(id);
    if (verdict?.orphaned && verdict.state === "queued") adrift.push(row);
  }
  return { ended, still, adrift };
}

/**
 * A job judged orphaned (its owner looked dead) is read again after that look: a
 * supervisor records its job's end and exits at once, so a row read before the end and an
 * owner looked at after it would call a finished job killed. Ended meanwhile, it ends with
 * its recorded status; taken over by a new supervisor, it waits on (the next pass judges it).
 */
function settleOrphans(
  verdict: { ended: EndedJob[]; still: string[] },
  reread: (ids: string[]) => Map<string, JobRow>,
): void {
  const orphans = verdict.ended.filter((e): e is EndedJob & { row: JobRow } => "row" in e && !isTerminal(e.row.status));
  if (orphans.length === 0) return;
  const now = reread(orphans.map((e) => e.id));
  verdict.ended = verdict.ended.flatMap((e) => {
    if (!("row" in e) || isTerminal(e.row.status)) return [e];
    const again = now.get(e.id);
    if (!again || (again.status === e.row.status && again.owner_pid === e.row.owner_pid)) return [e];
    if (isTerminal(again.status)) return [{ id: e.id, row: again, status: again.status }];
    verdict.still.push(e.id);
    return [];
  });
}

/** What the wait does after a pass: sleep this long, or end with an exit code. */
export type WaitStep = { sleepMs: number } | { code: WaitExit; missing: string[] };

/**
 * The deadlines, once jobs are still pending: the first that applies wins. An id never
 * seen must appear within appearMs (else exit 2, naming it); the whole wait ends at
 * timeoutMs (exit 3), as does an abort.
 */
export function nextStep(s: {
  t: number;
  start: number;
  appearMs: number;
  timeoutMs?: number;
  watchMs: number;
  /** Pending ids never seen in any store. */
  missing: string[];
  aborted: boolean;
}): WaitStep {
  const appearDeadline = s.missing.length ? s.start + s.appearMs : Number.POSITIVE_INFINITY;
  const timeoutDeadline = s.timeoutMs !== undefined ? s.start + s.timeoutMs : Number.POSITIVE_INFINITY;
  const first = Math.min(appearDeadline, timeoutDeadline);
  if (s.aborted || (s.t >= first && timeoutDeadline <= appearDeadline)) return { code: WAIT_EXIT.timeout, missing: [] };
  if (s.t >= first) return { code: WAIT_EXIT.missing, missing: s.missing };
  return { sleepMs: Math.max(1, Math.min(s.watchMs, first - s.t)) };
}

/** What one wait keeps between its looks at the stores. */
type WaitState = {
  pending: string[];
  seen: Set<string>;
  unsuccessful: boolean;
  unreadable: boolean;
  lastFull: number;
  lastOwners: number;
  /** Jobs this wait handed to supervisors of their own. */
  handed: Set<string>;
};

/**
 * One look at the stores (when one changed, owners are due a check, or a full pass is
 * due): ended jobs are printed and leave `pending`; ids an unreadable store may hold
 * are said so at once, not "missing" in 30 s.
 */
function look(o: WaitOptions, stores: WatchedStores, st: WaitState, emit: (line: string) => void, t: number): void {
  const checkOwners = t - st.lastOwners >= Math.min(o.intervalMs, 500);
  if (!(stores.changed() || checkOwners || t - st.lastFull >= o.intervalMs)) return;
  const read = stores.rows(st.pending);
  for (const id of read.rows.keys()) st.seen.add(id);
  const verdict = judgePending(st.pending, read, st.seen, checkOwners ? (r) => jobLiveness(r, o.identities) : null);
  settleOrphans(verdict, (ids) => stores.rows(ids).rows);
  // Once per job: a supervisor that cannot run it records it failed (dl supervise).
  for (const row of o.handOver ? verdict.adrift.filter((r) => !st.handed.has(r.id)) : []) {
    const home = stores.storeOf(row.id);
    if (home && o.handOver!(home.store, home.source, row)) st.handed.add(row.id);
  }
  for (const e of verdict.ended) {
    if ("pruned" in e || !SUCCESS.has(e.status)) st.unsuccessful = true;
    emit("pruned" in e ? prunedLine(e.id, o.json) : finishedLine(e.row, e.status, o.json, e.reason));
  }
  st.pending = verdict.still;
  if (checkOwners) st.lastOwners = t;
  st.lastFull = t;
  const broken = stores.unusable();
  const unseen = broken.length ? st.pending.filter((id) => !st.seen.has(id)) : [];
  for (const id of unseen) emit(unreadableLine(id, broken, o.json));
  if (unseen.length) {
    st.unreadable = true;
    st.pending = st.pending.filter((id) => st.seen.has(id));
  }
}

/**
 * Blocks until the jobs end. Wakes within ~watchMs of any commit to a watched store
 * (PRAGMA data_version), re-checks owners' liveness often (a dead owner means LOST at
 * once), and falls back to a full pass every intervalMs.
 */
export async function waitForJobs(o: WaitOptions): Promise<WaitOutcome> {
  const now = o.now ?? Date.now;
  const blocking = o.blocking ?? ((fn) => fn());
  const start = now();
  const stores = blocking(() => new WatchedStores(o.sources));
  const ids = [...new Set(o.ids.length ? o.ids : blocking(() => stores.activeIds()))];
  const st: WaitState = {
    pending: ids,
    seen: new Set(),
    unsuccessful: false,
    unreadable: false,
    lastFull: 0,
    lastOwners: 0,
    handed: new Set(),
  };
  const held: string[] = [];
  const emit = (line: string) => (o.all ? held.push(line) : o.write(line));
  const finish = (code: WaitExit, missing: string[] = []): WaitOutcome => {
    for (const line of held) o.write(line);
    for (const id of missing) o.write(missingLine(id, o.json));
    const unusable = stores.unusable();
    blocking(() => stores.close());
    return { code, pending: st.pending, missing, unusable };
  };
  for (;;) {
    const t = now();
    blocking(() => look(o, stores, st, emit, t));
    if (st.pending.length === 0) {
      // --all over a store it cannot read has not seen every job: not "all done".
      if (st.unreadable || (o.all && stores.unusable().length > 0)) return finish(WAIT_EXIT.missing);
      return finish(st.unsuccessful ? WAIT_EXIT.unsuccessful : WAIT_EXIT.allDone);
    }
    const step = nextStep({
      t,
      start,
      appearMs: o.appearMs ?? 30_000,
      timeoutMs: o.timeoutMs,
      watchMs: o.watchMs ?? 25,
      missing: st.pending.filter((id) => !st.seen.has(id)),
      aborted: o.signal?.aborted === true,
    });
    if ("code" in step) return finish(step.code, step.missing);
    await Bun.sleep(step.sleepMs);
  }
}
