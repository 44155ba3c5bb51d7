import type { Config } from "../config.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { type FoundJob, findJob } from "../jobs/shell/job-finder.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { jobIdProblem } from "../usage/job-id.ts";
import { EXIT } from "./exit.ts";

/**
 * The job an `ID` argument names, or null after one line on stderr and the exit code set:
 * 2 for a malformed id or one in no store, 1 when a store that could hold it is unreadable.
 */
export function jobFromArg(command: string, config: Config, id: string): FoundJob | null {
  const bad = jobIdProblem(id);
  if (bad) {
    process.stderr.write(`dl ${command}: ${bad}\n`);
    process.exitCode = EXIT.usage;
    return null;
  }
  const { job, problems } = findJob(knownJobStores(config.paths), id, sysIdentities);
  if (job) return job;
  if (problems.length) {
    const p = problems[0]!;
    process.stderr.write(
      `dl ${command}: the ${p.provider} store at ${p.state_dir} cannot be read (${p.error}); ${id} may be there\n`,
    );
    process.exitCode = EXIT.failure;
    return null;
  }
  process.stderr.write(
    `dl ${command}: no job ${id} in any store on this machine (pruned by dl reap, or never submitted); dl jobs lists them\n`,
  );
  process.exitCode = EXIT.usage;
  return null;
}
