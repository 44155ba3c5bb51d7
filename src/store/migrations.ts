/**
 * Schema migrations, compiled into the binary. Entry i moves a database from
 * `PRAGMA user_version = i` to `i + 1`. Never edit an entry that has shipped: append.
 *
 * Times are integer milliseconds since the epoch. Process start times are opaque TEXT
 * (whatever src/sys/identity.ts reports) so the store does not care how an OS counts them.
 * `seq` is the FIFO order of the queue across every server sharing the file.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT NOT NULL UNIQUE,
    provider          TEXT NOT NULL,
    status            TEXT NOT NULL,
    queue_reason      TEXT,
    project           TEXT NOT NULL,
    workdir           TEXT NOT NULL,
    workspace_root    TEXT NOT NULL,
    model             TEXT,
    effort            TEXT,
    task              TEXT NOT NULL,
    params            TEXT,
    timeout_s         REAL,
    owner_pid         INTEGER,
    owner_start       TEXT,
    server_id         TEXT,
    child_pid         INTEGER,
    child_pgid        INTEGER,
    child_start       TEXT,
    child_cmd         TEXT,
    created_at        INTEGER NOT NULL,
    started_at        INTEGER,
    ended_at          INTEGER,
    last_activity_at  INTEGER,
    exit_code         INTEGER,
    failure_kind      TEXT,
    final_response    TEXT,
    usage             TEXT,
    session_id        TEXT,
    retry_count       INTEGER NOT NULL DEFAULT 0,
    retry_at          INTEGER,
    warnings          TEXT,
    persist_error     TEXT
  );
  CREATE INDEX jobs_status_seq ON jobs(status, seq);
  CREATE INDEX jobs_ended ON jobs(ended_at);
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 2: the usage ledger. One row per delegation or job (INSERT OR REPLACE by id, so a
  // retried job counts once); it outlives the job rows dl reap prunes.
  `
  CREATE TABLE usage (
    id               TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,
    at               INTEGER NOT NULL,
    project          TEXT NOT NULL,
    model_requested  TEXT NOT NULL,
    model_used       TEXT NOT NULL,
    input_tokens     INTEGER NOT NULL,
    cache_read       INTEGER NOT NULL,
    cache_write      INTEGER NOT NULL,
    output_tokens    INTEGER NOT NULL,
    elapsed_ms       INTEGER NOT NULL,
    outcome          TEXT NOT NULL
  );
  CREATE INDEX usage_at ON usage(at);
  `,
  // 3: what a jailed job changed in the work tree and what dl kept read-only, measured
  // by dl after the run (sandbox/tree-report.ts), as JSON.
  `
  ALTER TABLE jobs ADD COLUMN changes TEXT;
  `,
  // 4: the window a job came from. A job is run by a supervisor of its own, which becomes
  // the row's owner (owner_*, server_id); origin_* keep the server that took the call,
  // so a job can say that its window closed, and "jobs die with the server" can follow it.
  `
  ALTER TABLE jobs ADD COLUMN origin_id TEXT;
  ALTER TABLE jobs ADD COLUMN origin_pid INTEGER;
  ALTER TABLE jobs ADD COLUMN origin_start TEXT;
  `,
];
