import { irregularStores } from "../jobs/shell/store-files.ts";
import type { JobStateDir } from "../sys/paths.ts";
import { EXIT } from "./exit.ts";

/**
 * Commands that read the job stores (wait, status, reap) check them first: a store file
 * that is a FIFO or a device would hold SQLite's open() for ever. Such a store is one line
 * naming the file and exit 2, before anything opens it. True when the command must stop.
 */
export function refuseIrregularStores(command: string, dirs: readonly JobStateDir[]): boolean {
  const bad = irregularStores(dirs);
  for (const b of bad) {
    const fix = b.variable ? `remove it, or point ${b.variable} elsewhere` : "remove it";
    process.stderr.write(
      `dl ${command}: ${JSON.stringify(b.file)} is ${b.kind}, not a regular file: it is not opened as the ${b.provider} job store; ${fix}\n`,
    );
  }
  if (bad.length) process.exitCode = EXIT.usage;
  return bad.length > 0;
}
