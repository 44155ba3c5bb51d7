import { randomBytes } from "node:crypto";
import { isAbsolute } from "node:path";
import { DlError } from "../../errors.ts";
import type { NewJob } from "../../store/types.ts";
import { identifierHoldsSecret } from "../../sys/redact.ts";
import { checkWorkdir } from "../../sys/workdir-guard.ts";
import { resolveWorkspace } from "../../sys/workspace.ts";
import type { EngineContext } from "./options.ts";

export interface SubmitResult {
  jobs: { id: string; status: "queued"; workdir: string; project: string; warnings: string[] }[];
  watch: string;
  watch_hint: string;
}

/**
 * Validates every task and resolves its workspace before anything is written, so a
 * batch with one bad task starts nothing. The error names the task by its position.
 */
export async function prepareJobs(
  rawTasks: readonly unknown[],
  c: EngineContext,
): Promise<{ rows: NewJob[]; views: SubmitResult["jobs"] }> {
  if (rawTasks.length === 0) throw new DlError("bad_input", "tasks is empty; pass at least one task");
  const { options, serverId } = c;
  const p = options.provider;
  const rows: NewJob[] = [];
  const views: SubmitResult["jobs"] = [];
  for (const [i, raw] of rawTasks.entries()) {
    try {
      const t = p.validate(raw);
      // Relative to what? The server's cwd means nothing to the caller: absolute only.
      if (!isAbsolute(t.workdir))
        throw new DlError(
          "bad_input",
          "workdir must be the absolute path of a checkout or worktree (one job per worktree)",
        );
      const workdir = checkWorkdir(t.workdir, options.guards);
      Object.assign(t.params, await p.admit?.(t, workdir));
      const ws = await resolveWorkspace(workdir, options.guards.toolEnv);
      // A row holds no key (store/jobs.ts redacts it): a path that does would be recorded as
      // another path, and the job would run nowhere. Said now, with the way out.
      if ([ws.workdir, ws.project, ws.root].some(identifierHoldsSecret))
        throw new DlError(
          "bad_input",
          "the workdir's path holds what looks like a key or one of dl's secrets, which dl never writes to its state; rename that folder (or the repository's) and submit again",
        );
      const id = `${p.idPrefix}${randomBytes(5).toString("hex")}`;
      rows.push({
        id,
        provider: p.name,
        project: ws.project,
        workdir: ws.workdir,
        workspace_root: ws.root,
        task: t.task,
        model: t.model,
        effort: t.effort,
        params: JSON.stringify(t.params),
        timeout_s: t.timeoutS,
        owner_pid: options.self.pid,
        owner_start: options.self.startTime,
        server_id: serverId,
        origin_id: serverId,
        origin_pid: options.self.pid,
        origin_start: options.self.startTime,
        created_at: c.now(),
        warnings: t.warnings.length ? JSON.stringify(t.warnings) : null,
      });
      views.push({ id, status: "queued", workdir: ws.workdir, project: ws.project, warnings: t.warnings });
    } catch (e) {
      if (e instanceof DlError) {
        // One task is the delegation itself: "task 1:" would name a list nobody gave.
        const which = rawTasks.length > 1 ? `task ${i + 1}: ` : "";
        throw new DlError(e.code, `${which}${e.message} (nothing was started)`, { ...e.data, index: i });
      }
      throw e;
    }
  }
  return { rows, views };
}

/**
 * The queue bound, checked inside the insert's transaction against the queued count of
 * every server: jobs beyond the free slots may wait only up to maxQueue, else the whole
 * batch is refused (busy) rather than piling up work nobody will see end.
 */
export function queueBound(c: EngineContext, free: number, adding: number): (queued: number) => void {
  return (queued) => {
    const waiting = queued + adding - free;
    if (waiting > c.options.maxQueue) {
      throw new DlError(
        "busy",
        `the ${c.options.provider.name} queue is full (${queued} queued, ${free} slots free, bound ${c.options.maxQueue}); nothing was started — wait for jobs to end (dl wait) and submit again`,
      );
    }
  };
}

/** The watcher command for these ids and the hint that tells the caller to start it. */
export function watchFor(ids: readonly string[], waitCommand = "dl wait"): Pick<SubmitResult, "watch" | "watch_hint"> {
  const watch = `${waitCommand} ${ids.join(" ")}`;
  return {
    watch,
    watch_hint: `Start \`${watch}\` now in the background (Bash run_in_background or the Monitor tool): it prints one line as each job ends and is the only completion signal.`,
  };
}
