import type { Config } from "../config.ts";
import { describeError } from "../errors.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { type JobFilter, listJobs } from "../jobs/shell/job-finder.ts";
import { log } from "../log.ts";
import { canonicalPath, jobStateDirs } from "../sys/paths.ts";
import { resolveWorkspace } from "../sys/workspace.ts";

/**
 * What a new `dl serve` says about its project's work from windows that closed: jobs run
 * on under their supervisors when the server that took their call is gone (Claude Code's
 * exit choices look alike on the wire, so dl keeps the work), and this is where the user
 * hears of them, with the commands that find and stop them.
 */
export async function sayClosedWindows(config: Config): Promise<number> {
  try {
    const stores = jobStateDirs(config.paths);
    // Most starts find no job of a closed window in any project: then git is not run to
    // learn this one's (a child process at every start: ~2-5 ms of CPU).
    const closed = (filter: JobFilter) =>
      listJobs(stores, filter, sysIdentities).jobs.filter((j) => j.window === "closed");
    if (closed({ limit: 10_000 }).length === 0) return 0;
    const project = (await resolveWorkspace(canonicalPath(process.cwd()), config.childEnv)).project;
    const running = closed({ project, limit: 10_000 });
    if (running.length === 0) return 0;
    const ids = running.map((j) => j.row.id);
    log.info(
      `${running.length} job(s) of this project from a closed window still run: ${ids.slice(0, 8).join(" ")}${ids.length > 8 ? " …" : ""}; poll_* or dl jobs shows them, dl wait waits for them, dl cancel stops one`,
    );
    return running.length;
  } catch (e) {
    log.debug(`dl serve: could not count the project's jobs from closed windows: ${describeError(e)}`);
    return 0;
  }
}
