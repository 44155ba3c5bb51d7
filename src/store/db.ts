import { Database } from "bun:sqlite";
import { closeSync, constants, openSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { DlError, describeError } from "../errors.ts";
// Plain data (no imports): which variable moves a provider's store, for the error text.
import { factsOf } from "../providers.ts";
import { privateDir } from "../sys/private-file.ts";
import { tightenTree } from "../sys/private-tree.ts";
import { refuseUnsafeAncestors } from "../sys/safe-ancestors.ts";
import { MIGRATIONS } from "./migrations.ts";
import { refuseForeignStore, STORE_FILES } from "./store-owner.ts";
import { DB_FILE } from "./types.ts";

/**
 * How long a writer waits for another process's write lock before SQLITE_BUSY escapes
 * (DELEGATE_STORE_BUSY_TIMEOUT; set once per process by the command's start, like the
 * log level, so every store this process opens waits alike).
 */
let busyTimeoutMs = 5000;

export function setStoreBusyTimeout(ms: number): void {
  busyTimeoutMs = Math.max(1, Math.round(ms));
}

/** What a storage error code means, in words a user can act on; undefined when it needs none. */
const CAUSES: Readonly<Record<string, string>> = {
  ENOTDIR: "a part of the state directory's path is a file, not a directory",
  EEXIST: "a file stands where the state directory should be",
  EACCES: "permission denied on the state directory or its files",
  EPERM: "permission denied on the state directory or its files",
  EROFS: "the state directory is on a read-only file system",
  ENOSPC: "the disk holding the state directory is full",
  EISDIR: "a directory stands where the job database file should be",
  SQLITE_FULL: "the disk holding the state directory is full",
  SQLITE_READONLY: "the job database cannot be written (read-only file or file system)",
  SQLITE_PERM: "permission denied on the job database",
  SQLITE_CANTOPEN:
    "the job database file cannot be opened (missing directory, permissions or a directory in its place)",
  SQLITE_NOTADB: "the job database file is not an SQLite database (corrupt or overwritten)",
  SQLITE_CORRUPT: "the job database file is corrupt",
};

/** The explanation of a storage cause code (SQLite's extended codes map to their base). */
export function explainStorageCause(code: string): string | undefined {
  const base = code.startsWith("SQLITE_") ? code.replace(/^(SQLITE_[A-Z]+?)(_[A-Z_]+)?$/, "$1") : code;
  return Object.hasOwn(CAUSES, code) ? CAUSES[code] : Object.hasOwn(CAUSES, base) ? CAUSES[base] : undefined;
}

/** The cause code of a storage failure (a DlError from here, or the raw error). */
export function storageCause(e: unknown): string {
  const fromData = e instanceof DlError ? e.data.cause : undefined;
  if (typeof fromData === "string") return fromData;
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" ? code.slice(0, 40) : describeError(e);
}

const variableOf = (provider: string | undefined) =>
  (provider && factsOf(provider)?.stateEnv) || "the provider's state dir variable";

/**
 * A storage failure as a DlError. The message names the operation and a bounded
 * description of the cause (class + SQLite/errno code, explained when it is a known one),
 * never the path: paths can hold user names and end up in model-visible results.
 */
export function storageError(op: string, e: unknown, provider?: string): DlError {
  if (e instanceof DlError) return e;
  const cause = storageCause(e);
  const explained = explainStorageCause(cause);
  const variable = variableOf(provider);
  const what = explained
    ? `job storage failed to ${op}: ${explained} (${cause}); fix that or point ${variable} elsewhere.`
    : `job storage failed to ${op} (${cause}); check that the provider state directory exists, is writable and is not full.`;
  return new DlError("storage", `${what} Nothing was started.`, { cause });
}

function kindOf(st: Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  if (st.isDirectory()) return "a directory";
  return "not a regular file";
}

/**
 * A store file of `stateDir` that exists but is not a regular file, or null. SQLite's
 * open() of a FIFO waits for a writer for ever (no signal handler can run meanwhile), and
 * a device never ends: such a store is refused before anything opens it. stat() itself
 * never blocks on them.
 */
export function irregularStoreFile(stateDir: string): { file: string; kind: string } | null {
  for (const name of STORE_FILES) {
    const file = join(stateDir, name);
    let st: Stats;
    try {
      st = statSync(file);
    } catch {
      continue; // missing (or unreadable: SQLite says so itself)
    }
    if (!st.isFile()) return { file, kind: kindOf(st) };
  }
  return null;
}

/**
 * Opens (creating if needed) the job database of one provider state dir and brings its
 * schema up to date. WAL lets `dl wait` and every server read while one writes;
 * busy_timeout makes concurrent writers queue instead of failing.
 *
 * Throws DlError "storage" when the file cannot be created or written: the caller must
 * run nothing (fail closed).
 */
export function openDatabase(stateDir: string, opts: { readonly?: boolean; provider?: string } = {}): Database {
  const file = join(stateDir, DB_FILE);
  const irregular = irregularStoreFile(stateDir);
  if (irregular) {
    // The path stays in the data (for the CLI): messages can reach a model.
    throw new DlError(
      "storage",
      `job storage refused: a job store file is ${irregular.kind}, not a regular file; remove it or point ${variableOf(opts.provider)} elsewhere. Nothing was started.`,
      { cause: "not_regular", file: irregular.file },
    );
  }
  let db: Database | undefined;
  try {
    if (opts.readonly) {
      // Read-only too: a folder above that another user may write lets them swap the store for theirs.
      refuseUnsafeAncestors(stateDir);
      refuseForeignStore(stateDir);
      db = new Database(file, { readonly: true, strict: true });
      db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      return db;
    }
    keepPrivate(stateDir);
    db = new Database(file, { create: true, readwrite: true, strict: true });
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    // journal_mode is persistent in the file; setting it again is cheap and idempotent.
    enableWal(db);
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    migrate(db);
    // A read-only mount or a full disk shows up only on write: prove writability now.
    db.exec("INSERT INTO meta(key, value) VALUES('opened', '1') ON CONFLICT(key) DO NOTHING");
    return db;
  } catch (e) {
    db?.close(false);
    throw storageError("open the job database", e, opts.provider);
  }
}

/**
 * The state dir 0700 (tightened, with everything an older dl or a user left in it open:
 * a 0644 store, its WAL, old job folders; another user's refused) and a new store 0600: it is created so before
 * SQLite opens it, since SQLite gives its -wal and -shm the database's own mode.
 */
function keepPrivate(stateDir: string): void {
  privateDir(stateDir);
  tightenTree(stateDir);
  try {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    closeSync(openSync(join(stateDir, DB_FILE), flags, 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  // One there already (or made meanwhile) is used only when it is this user's, its -wal and -shm too.
  refuseForeignStore(stateDir);
}

/**
 * Switches the file to WAL, retrying while another process does the same. Servers that
 * start together on a fresh state dir all find it in rollback mode and all ask for the
 * switch, which needs the file's exclusive lock; SQLite answers SQLITE_BUSY at once,
 * without the busy handler, to whoever would deadlock waiting for it. Unretried, that
 * killed one server of three about one start in eight (a test waiting for its ready
 * line hung). Bounded by the busy timeout, like any other wait for the write lock.
 */
function enableWal(db: Database): void {
  const deadline = performance.now() + busyTimeoutMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (e) {
      const code = (e as { code?: unknown })?.code;
      if (typeof code !== "string" || !code.startsWith("SQLITE_BUSY") || performance.now() >= deadline) throw e;
    }
    // Open is synchronous (every caller expects a ready store); the pauses are a few ms.
    Bun.sleepSync(pause * (0.5 + Math.random()));
  }
}

/**
 * Applies pending migrations inside one IMMEDIATE transaction, so two servers starting
 * together cannot both migrate: the second waits, then sees the new user_version.
 */
function migrate(db: Database): void {
  db.transaction(() => {
    const row = db.query("PRAGMA user_version").get() as { user_version: number } | null;
    const current = row?.user_version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new DlError(
        "storage",
        `the job database was written by a newer dl (schema ${current}, this build knows ${MIGRATIONS.length}); upgrade dl or point the state dir elsewhere`,
        { schema: current },
      );
    }
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (current !== MIGRATIONS.length) db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
