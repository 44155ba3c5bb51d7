import { factsOf } from "../../providers.ts";
import { irregularStoreFile } from "../../store/db.ts";
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
