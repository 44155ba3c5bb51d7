import { foreignStores, irregularStores } from "../jobs/shell/store-files.ts";
import type { JobStateDir } from "../sys/paths.ts";
import { EXIT } from "./exit.ts";

/**
 * Commands that read the job stores (wait, status, reap, jobs) check them first: a store
 * file that is a FIFO or a device would hold SQLite's open() for ever, and a store of
 * another user (its folder or a file) would be read as dl's. Such a store is one line
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
  const foreign = bad.length ? [] : foreignStores(dirs);
  for (const f of foreign)
    process.stderr.write(
      `dl ${command}: ${f.problem}${f.variable ? ` (${f.variable})` : ""}; it is not opened as the ${f.provider} job store\n`,
    );
  if (bad.length || foreign.length) process.exitCode = EXIT.usage;
  return bad.length + foreign.length > 0;
}
