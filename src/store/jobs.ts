import type { Database } from "bun:sqlite";
import { redact, redactIdentifier } from "../sys/redact.ts";
import { openDatabase, storageError } from "./db.ts";
import { movesInto } from "./transitions.ts";
import type { JobPatch, JobRow, JobStatus, NewJob } from "./types.ts";
import { ACTIVE_STATUSES } from "./types.ts";

/**
 * Every column a caller writes, once: `true` for those a new job comes with (the insert's
 * list), `false` for those only an update sets. Any but `id` may be patched; keys are
 * checked against this so no caller builds SQL.
 */
const COLUMNS = {
  id: true,
  provider: true,
  status: true,
  queue_reason: true,
  project: true,
  workdir: true,
  workspace_root: true,
  model: true,
  effort: true,
  task: true,
  params: true,
  timeout_s: true,
  owner_pid: true,
  owner_start: true,
  server_id: true,
  child_pid: false,
  child_pgid: false,
  child_start: false,
  child_cmd: false,
  created_at: true,
  started_at: false,
  ended_at: false,
  last_activity_at: false,
  exit_code: false,
  failure_kind: false,
  final_response: false,
  usage: false,
  session_id: false,
  retry_count: false,
  retry_at: false,
  warnings: true,
  persist_error: false,
  changes: false,
  origin_id: true,
  origin_pid: true,
  origin_start: true,
} as const satisfies Record<keyof JobPatch | "id", boolean>;

type Column = keyof typeof COLUMNS;
const PATCHABLE = new Set<string>(Object.keys(COLUMNS).filter((c) => c !== "id"));
const INSERT_COLS = (Object.keys(COLUMNS) as Column[]).filter((c) => COLUMNS[c]) as (keyof NewJob)[];

type Bindable = string | number | null;

/**
 * What a row may hold: every text redacted (sys/redact.ts) on its way in, so no key a task,
 * a model or a CLI carried reaches the store's pages, its WAL, or another user's reader.
 */
export const stored = <T extends Bindable | undefined>(v: T): T => (typeof v === "string" ? (redact(v) as T) : v);

/**
 * The columns that say where a job runs: cut of held keys and key shapes only
 * (redactIdentifier), never of a value learned from text, or the row would name a folder
 * that is not there. submit.ts refuses a path that holds a key before any row is written.
 */
const PLACE_COLUMNS = new Set<string>(["workdir", "project", "workspace_root"]);
const storedCell = <T extends Bindable | undefined>(c: string, v: T): T =>
  typeof v === "string" && PLACE_COLUMNS.has(c) ? (redactIdentifier(v) as T) : stored(v);

/** The meta key prefix of a pending cancel request (one row per job id). */
const CANCEL_REQUEST = "cancel_request:";

export type LaunchClaim =
  | { ok: true }
  /** Another server launched less than `staggerMs` ago; try again after `waitMs`. */
  | { ok: false; waitMs: number }
  /** The row is no longer queued (cancelled, reaped): do not start it. */
  | { ok: false; gone: true };

/**
 * The typed repository over one provider's `jobs.sqlite`. Every method is one statement
 * or one IMMEDIATE transaction; every failure surfaces as DlError "storage".
 */
export class JobStore {
  private constructor(
    readonly db: Database,
    readonly stateDir: string,
  ) {}

  /** `provider` names the state dir variable in a storage error (a PROVIDERS name → its stateEnv). */
  static open(stateDir: string, opts: { readonly?: boolean; provider?: string } = {}): JobStore {
    return new JobStore(openDatabase(stateDir, opts), stateDir);
  }

  close(): void {
    this.db.close(false);
  }

  /**
   * Inserts every job or none. `guard` runs inside the write transaction with the
   * current number of queued rows, so a queue bound checked there cannot be raced by
   * another server submitting at the same moment; it throws to refuse.
   */
  insertMany(jobs: readonly NewJob[], guard?: (queued: number) => void): void {
    const sql = `INSERT INTO jobs(${INSERT_COLS.join(",")}) VALUES(${INSERT_COLS.map(() => "?").join(",")})`;
    this.run("record the submitted jobs", () =>
      this.db
        .transaction(() => {
          if (guard) guard(this.countStatus("queued"));
          const stmt = this.db.query(sql);
          for (const j of jobs) {
            const row: Record<string, Bindable | undefined> = { status: "queued", ...j };
            stmt.run(...INSERT_COLS.map((c) => (c === "id" ? row[c] : storedCell(c, row[c])) ?? null));
          }
        })
        .immediate(),
    );
  }

  get(id: string): JobRow | undefined {
    return this.run(
      "read a job",
      () => (this.db.query("SELECT * FROM jobs WHERE id = ?").get(id) as JobRow | null) ?? undefined,
    );
  }

  getMany(ids: readonly string[]): JobRow[] {
    if (ids.length === 0) return [];
    return this.run(
      "read jobs",
      () =>
        this.db
          .query(`SELECT * FROM jobs WHERE id IN (${ids.map(() => "?").join(",")}) ORDER BY seq`)
          .all(...ids) as JobRow[],
    );
  }

  /** Rows with one of `statuses`, oldest first (FIFO order). */
  listByStatus(statuses: readonly JobStatus[], limit = 100_000): JobRow[] {
    if (statuses.length === 0) return [];
    return this.run(
      "list jobs",
      () =>
        this.db
          .query(`SELECT * FROM jobs WHERE status IN (${statuses.map(() => "?").join(",")}) ORDER BY seq LIMIT ?`)
          .all(...statuses, limit) as JobRow[],
    );
  }

  listActive(): JobRow[] {
    return this.listByStatus(ACTIVE_STATUSES);
  }

  /** Most recent rows of any status, newest first. */
  listRecent(limit: number): JobRow[] {
    return this.run(
      "list jobs",
      () => this.db.query("SELECT * FROM jobs ORDER BY seq DESC LIMIT ?").all(limit) as JobRow[],
    );
  }

  countStatus(status: JobStatus): number {
    const r = this.db.query("SELECT COUNT(*) AS n FROM jobs WHERE status = ?").get(status) as { n: number };
    return r.n;
  }

  /**
   * Updates one row. With `expect`, only when its status is one of those
   * (compare-and-set): returns false when another process changed it first. A patch that
   * sets a status lands only on a row that may make that move (transitions.ts): a row
   * that already ended is never rewritten into another state.
   */
  update(id: string, patch: JobPatch, expect?: readonly JobStatus[]): boolean {
    const keys = Object.keys(patch).filter((k) => patch[k as keyof JobPatch] !== undefined);
    for (const k of keys) if (!PATCHABLE.has(k)) throw new Error(`not a jobs column: ${k}`);
    if (keys.length === 0) return this.get(id) !== undefined;
    const from = patch.status === undefined ? expect : movesInto(patch.status, expect?.length ? expect : undefined);
    const values = keys.map((k) => storedCell(k, patch[k as keyof JobPatch] as Bindable));
    let sql = `UPDATE jobs SET ${keys.map((k) => `${k} = ?`).join(", ")} WHERE id = ?`;
    const args: Bindable[] = [...values, id];
    if (from && from.length > 0) {
      sql += ` AND status IN (${from.map(() => "?").join(",")})`;
      args.push(...from);
    }
    return this.run("update a job", () => this.db.query(sql).run(...args).changes > 0);
  }

  /**
   * Moves a queued job to running if the shared launch stagger allows it, in one
   * IMMEDIATE transaction so servers cannot launch inside each other's stagger window.
   */
  claimLaunch(id: string, patch: JobPatch, now: number, staggerMs: number): LaunchClaim {
    return this.run("claim a job launch", () =>
      this.db
        .transaction((): LaunchClaim => {
          const last = this.getMeta("last_launch_ms");
          const since = last === undefined ? Infinity : now - Number(last);
          // A clock that went backwards must not freeze launches for ever.
          if (staggerMs > 0 && since >= 0 && since < staggerMs) return { ok: false, waitMs: staggerMs - since };
          if (!this.update(id, { ...patch, status: "running", queue_reason: null }, ["queued"]))
            return { ok: false, gone: true };
          this.setMeta("last_launch_ms", String(now));
          return { ok: true };
        })
        .immediate(),
    );
  }

  /**
   * A supervisor takes a queued job over from the server that queued it: the row's owner
   * becomes the supervisor, only while the row is still queued and still that server's
   * (so two supervisors never both run one job). False when it was not.
   */
  adopt(id: string, from: string, owner: Pick<JobRow, "server_id" | "owner_pid" | "owner_start">): boolean {
    return this.run(
      "adopt a job",
      () =>
        this.db
          .query(
            "UPDATE jobs SET server_id = ?, owner_pid = ?, owner_start = ? WHERE id = ? AND status = 'queued' AND server_id = ?",
          )
          .run(owner.server_id, owner.owner_pid, owner.owner_start, id, from).changes > 0,
    );
  }

  /**
   * Names a queued job's new owner (the supervisor it was just handed to) while it is
   * still queued under server `from`: a handoff that lost a race to another never
   * overwrites the winner's adoption.
   */
  setOwnerIfFrom(id: string, from: string, owner: Pick<JobRow, "owner_pid" | "owner_start">): boolean {
    return this.run(
      "name a job's owner",
      () =>
        this.db
          .query("UPDATE jobs SET owner_pid = ?, owner_start = ? WHERE id = ? AND status = 'queued' AND server_id = ?")
          .run(owner.owner_pid, owner.owner_start, id, from).changes > 0,
    );
  }

  getMeta(key: string): string | undefined {
    const r = this.db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null;
    return r?.value;
  }

  setMeta(key: string, value: string): void {
    this.run("write shared state", () =>
      this.db
        .query("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        .run(key, stored(value)),
    );
  }

  /**
   * Asks the server that runs job `id` to cancel it (dl cancel from a shell cannot stop
   * another process's child safely; the owner's admission loop reads these each pass).
   */
  requestCancel(id: string, at: number): void {
    this.setMeta(`${CANCEL_REQUEST}${id}`, String(at));
  }

  /** Ids whose cancellation was asked for and not yet served. */
  cancelRequests(): string[] {
    return this.run("read cancel requests", () =>
      (
        this.db
          .query("SELECT key FROM meta WHERE key >= ? AND key < ? ORDER BY key LIMIT 1000")
          .all(CANCEL_REQUEST, `${CANCEL_REQUEST}\uffff`) as { key: string }[]
      ).map((r) => r.key.slice(CANCEL_REQUEST.length)),
    );
  }

  clearCancelRequest(id: string): void {
    this.run("clear a cancel request", () =>
      this.db.query("DELETE FROM meta WHERE key = ?").run(`${CANCEL_REQUEST}${id}`),
    );
  }

  /**
   * Changes whenever another connection commits to the file: a cheap way for a
   * watcher to notice new job states without re-reading rows.
   */
  dataVersion(): number {
    const r = this.db.query("PRAGMA data_version").get() as { data_version: number };
    return r.data_version;
  }

  /** Deletes finished rows that ended before `before` (a dry run only reads them); returns their ids. */
  pruneFinished(before: number, dryRun = false): string[] {
    const where = "ended_at IS NOT NULL AND ended_at < ? AND status NOT IN ('queued','running')";
    const sql = dryRun ? `SELECT id FROM jobs WHERE ${where}` : `DELETE FROM jobs WHERE ${where} RETURNING id`;
    return this.run("prune finished jobs", () => (this.db.query(sql).all(before) as { id: string }[]).map((r) => r.id));
  }

  private run<T>(op: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw storageError(op, e);
    }
  }
}
