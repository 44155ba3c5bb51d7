import { closeSync, constants } from "node:fs";
import { join } from "node:path";
import { openOwned, openOwnedDir } from "../sys/owned.ts";
import { DB_FILE } from "./types.ts";

/** The files SQLite opens for a store: the database, its write-ahead log, its shared-memory index. */
export const STORE_FILES = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`];

/**
 * A store of another user is refused before SQLite opens it, read-only too (`dl status`,
 * `dl jobs`, `dl wait`): its state dir, and each of its files that is there, is opened
 * and checked by its descriptor (sys/owned.ts). A planted `jobs.sqlite`, or a `-wal` its
 * planter keeps, would take dl's rows where that user reads them, whatever its mode.
 */
export function refuseForeignStore(stateDir: string): void {
  closeSync(openOwnedDir(stateDir).fd);
  for (const name of STORE_FILES) {
    let fd: number;
    try {
      fd = openOwned(join(stateDir, name), constants.O_RDONLY).fd;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    closeSync(fd);
  }
}
