import { DlError } from "../../errors.ts";
import { factsOf } from "../../providers.ts";
import { storeAccess } from "../../store/access.ts";
import { irregularStoreFile } from "../../store/db.ts";
import { refuseForeignStore } from "../../store/store-owner.ts";
import type { JobStateDir } from "../../sys/paths.ts";

/** A job store that must not be opened: one of its files is a FIFO, a device, a directory. */
export interface IrregularStore {
  provider: string;
  file: string;
  kind: string;
  /** The variable that moves this provider's state dir. */
  variable: string | undefined;
}

/** Every store of `dirs` with a file that is not a regular file (checked with stat, which never blocks). */
export function irregularStores(dirs: readonly JobStateDir[]): IrregularStore[] {
  const found: IrregularStore[] = [];
  for (const d of dirs) {
    const bad = irregularStoreFile(d.stateDir);
    if (!bad) continue;
    const variable = factsOf(d.provider)?.stateEnv;
    found.push({ provider: d.provider, ...bad, variable });
  }
  return found;
}

/** A job store dl could read but must not: its folder or one of its files is another user's. */
export interface ForeignStore {
  provider: string;
  /** The refusal: the path, its owner and what to do (sys/owned.ts). */
  problem: string;
  variable: string | undefined;
}

/**
 * Every store of `dirs` this user can read whose folder or files belong to another user
 * (root reading a user's store, a planted `jobs.sqlite`). One this user cannot even read
 * is left to the commands' own words for it (store/access.ts).
 */
export function foreignStores(dirs: readonly JobStateDir[]): ForeignStore[] {
  const found: ForeignStore[] = [];
  for (const d of dirs) {
    if (storeAccess(d.stateDir).state !== "present") continue;
    try {
      refuseForeignStore(d.stateDir);
    } catch (e) {
      if (!(e instanceof DlError) || e.data.cause !== "not_owned") continue;
      found.push({ provider: d.provider, problem: e.message, variable: factsOf(d.provider)?.stateEnv });
    }
  }
  return found;
}
