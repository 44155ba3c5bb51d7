import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../../../config.ts";
import type { JobCaps } from "../../../config-tree.ts";
import { log } from "../../../log.ts";
import type { JobRow } from "../../../store/types.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { WorkspaceGuards } from "../../../sys/workspace.ts";
import type { EngineOptions } from "../../engine/engine.ts";
import { jsonColumn, type PollView } from "../../engine/poll.ts";
import { sanitizeBlock, sanitizeJson } from "../../sanitize.ts";
import { passedValues } from "../../secrets.ts";
import { JobService, type JobsRole } from "../../service.ts";
import { findDshLauncher, requireDshLauncher } from "./launcher.ts";
import { dshProvider } from "./provider.ts";
import { dshOutDir } from "./task.ts";

/**
 * The dsh provider's job service: submit_dsh, poll_dsh, cancel_dsh on the generic
 * JobService, with the launcher checked before each submit. Its state dir (queue, caps)
 * is separate from every other provider's.
 */
export interface DshServiceOptions {
  /** DELEGATE_DSH_LAUNCHER (name on PATH or absolute path). */
  launcher: string;
  /** DELEGATE_DSH_MODELS_FILE (resolved). */
  modelsFile: string;
  /** What a relative workdir ('.' by default) is relative to. */
  baseDir: string;
  caps: Readonly<JobCaps>;
  /** DELEGATE_DSH_STATE_DIR (resolved). */
  stateDir: string;
  /** The launcher's environment (config.dshChildEnv: the allowlist plus DELEGATE_DSH_ENV_PASSTHROUGH). */
  childEnv: Readonly<Record<string, string>>;
  /** Values of DELEGATE_DSH_ENV_PASSTHROUGH (keys, likely): never shown in what a job reports. */
  secretValues?: readonly string[];
  guards: WorkspaceGuards;
  /** Tests: engine tick, grace, clock; the watcher command. */
  engine?: Partial<EngineOptions>;
}

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

/** The dsh service's settings, taken from the one Config; `baseDir` is where the server runs. */
export function dshServiceOptions(c: Config, waitCommand: string, baseDir: string): DshServiceOptions {
  return {
    launcher: c.dsh.launcher,
    modelsFile: c.paths.dshModelsFile,
    baseDir,
    caps: c.dsh.caps,
    stateDir: c.paths.stateDirs.dsh,
    // Only the launcher gets DELEGATE_DSH_ENV_PASSTHROUGH; git probes do not.
    childEnv: c.dshChildEnv,
    secretValues: passedValues(c.dsh.envPassthrough, c.dshChildEnv),
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}

/** This provider's jobs under the Config, relative workdirs resolved against `baseDir` (PROVIDERS loads it on first use). */
export function startJobs(c: Config, waitCommand: string, baseDir: string, role: JobsRole = {}): Promise<DshService> {
  const o = dshServiceOptions(c, waitCommand, baseDir);
  return startDshService({ ...o, engine: { ...o.engine, ...role } });
}

/**
 * Opens the shared state (fails closed with DlError "storage" when it cannot be
 * written). A missing launcher is logged, not thrown: the server starts and submit_dsh
 * says what to install or set; every submit checks it again first.
 */
export function startDshService(o: DshServiceOptions): Promise<DshService> {
  const found = findDshLauncher(o.launcher, o.childEnv);
  if (!found.ok) log.warn(`dsh: ${found.message}`);
  const provider = dshProvider({
    launcher: o.launcher,
    childEnv: o.childEnv,
    secretValues: o.secretValues ?? [],
    modelsFile: o.modelsFile,
    baseDir: o.baseDir,
  });
  // A dsh run is not replayed: its change would be made twice.
  const engine = { provider, stateDir: o.stateDir, caps: o.caps, guards: o.guards, maxRetries: 0 };
  return JobService.start(
    engine,
    {
      beforeSubmit: () => {
        requireDshLauncher(o.launcher, o.childEnv);
      },
      view: (v, row) => dshView(v, row, o.stateDir),
    },
    o.engine,
  );
}

function dshView(v: PollView, row: JobRow | undefined, stateDir: string): DshPollView {
  const { usage: _u, effort: _e, session_id: _s, ...rest } = v;
  const u = jsonColumn(row?.usage);
  const outDir = dshOutDir(join(stateDir, "jobs", v.id));
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
