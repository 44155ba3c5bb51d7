import { closeSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { euid, notOwned, openOwnedDir } from "../sys/owned.ts";
import { DB_FILE } from "./types.ts";

/** The files SQLite opens for a store: the database, its write-ahead log, its shared-memory index. */
export const STORE_FILES = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`];

/**
 * A store of another user is refused before SQLite opens it, read-only too (`dl status`,
 * `dl jobs`, `dl wait`): its state dir is opened and checked by its descriptor
 * (sys/owned.ts), and each of its files that is there (what a link leads to, as SQLite
 * follows it) must be this user's.
 * A planted `jobs.sqlite`, or a `-wal` its planter keeps, would take dl's rows where that
 * user reads them, whatever its mode.
 *
 * The files are asked with stat, never opened: closing any descriptor of a file drops
 * every POSIX lock this process holds on it, so opening and closing a store this process
 * already has open (the ledger's connection beside the jobs') released SQLite's locks
 * under it, and a live store read short (SQLITE_IOERR_SHORT_READ). Nobody else can swap
 * them: the folder that holds them is this user's and 0700.
 */
export function refuseForeignStore(stateDir: string): void {
  closeSync(openOwnedDir(stateDir).fd);
  for (const name of STORE_FILES) {
    const path = join(stateDir, name);
    const st = statOrNull(path);
    if (st && st.uid !== euid()) throw notOwned(path, st);
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}
