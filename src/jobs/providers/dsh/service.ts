import { existsSync } from "node:fs";
import type { Config } from "../../../config.ts";
import { log } from "../../../log.ts";
import type { JobRow } from "../../../store/types.ts";
import { jobDirOf } from "../../../sys/paths.ts";
import { sanitizeBlock, sanitizeJson } from "../../../sys/sanitize.ts";
import { jsonColumn, type PollView } from "../../engine/poll.ts";
import { JobService, type ServiceContext } from "../../service.ts";
import { findDshLauncher, requireDshLauncher } from "./launcher.ts";
import { dshProvider } from "./provider.ts";
import { dshOutDir } from "./task.ts";

/**
 * The dsh provider's job service: submit_dsh, poll_dsh, cancel_dsh on the generic
 * JobService, with the launcher checked before each submit. Its state dir (queue, caps)
 * is separate from every other provider's.
 */

/** A poll row as poll_dsh shows it: the engine's view plus what the run left for review. */
type DshPollView = Omit<PollView, "usage" | "effort" | "session_id"> & {
  /** The run dir holding the change (and result.json), to review and apply by hand. */
  out_dir: string | null;
  diff_stat: string | null;
  tokens: unknown;
  wall_s: number | null;
  /** Set when the job was `lost` and a later server killed its verified orphan launcher. */
  orphan_killed?: true;
};

export type DshService = JobService<DshPollView>;

/**
 * This provider's jobs under the Config, relative workdirs resolved against the server's
 * folder. Opens the shared state (fails closed with DlError "storage" when it cannot be
 * written). A missing launcher is logged, not thrown: the server starts and submit_dsh
 * says what to install or set; every submit checks it again first.
 */
export function startJobs(c: Config, ctx: ServiceContext): Promise<DshService> {
  const launcher = c.dsh.launcher;
  // Only the launcher gets DELEGATE_DSH_ENV_PASSTHROUGH; git probes do not.
  const childEnv = c.dshChildEnv;
  const found = findDshLauncher(launcher, childEnv);
  if (!found.ok) log.warn(`dsh: ${found.message}`);
  const provider = dshProvider({
    launcher,
    childEnv,
    modelsFile: c.paths.dshModelsFile,
    baseDir: ctx.baseDir,
  });
  return JobService.start(c, ctx, {
    provider,
    caps: c.dsh.caps,
    // A dsh run is not replayed: its change would be made twice.
    maxRetries: 0,
    beforeSubmit: () => {
      requireDshLauncher(launcher, childEnv);
    },
    view: (v, row) => dshView(v, row, ctx.stateDir),
  });
}

function dshView(v: PollView, row: JobRow | undefined, stateDir: string): DshPollView {
  const { usage: _u, effort: _e, session_id: _s, ...rest } = v;
  const u = jsonColumn(row?.usage);
  const outDir = dshOutDir(jobDirOf(stateDir, v.id));
  // dsh's status list has no killed_on_restart: to its caller that job is lost either way.
  const orphan = rest.status === "killed_on_restart";
  return {
    ...rest,
    ...(orphan ? { status: "lost", orphan_killed: true as const } : {}),
    out_dir: existsSync(outDir) ? outDir : null,
    // Read from the row, not the flattened usage, so the stat keeps its lines.
    diff_stat: typeof u.diff_stat === "string" ? sanitizeBlock(u.diff_stat) : null,
    tokens: sanitizeJson(u.tokens ?? null),
    wall_s: typeof u.wall_s === "number" ? u.wall_s : null,
  };
}
