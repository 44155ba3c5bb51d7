import { existsSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../../log.ts";
import type { JobRow } from "../../../store/types.ts";
import type { CancelResult, EngineOptions, JobEngine, SubmitResult } from "../../engine.ts";
import { jsonColumn, pollWith, startMachineEngine } from "../../machine-engine.ts";
import type { PollView } from "../../poll.ts";
import { sanitizeBlock, sanitizeJson } from "../../sanitize.ts";
import type { WorkspaceGuards } from "../../workspace.ts";
import { findDshLauncher, requireDshLauncher } from "./launcher.ts";
import { dshProvider } from "./provider.ts";
import { dshOutDir } from "./task.ts";

/**
 * Everything the dsh MCP tools call: submit_dsh → submit, poll_dsh → poll, cancel_dsh →
 * cancel. One instance per server process; every instance on the same state dir shares
 * the queue and the caps (flock slots), separate from Codex's.
 */
export interface DshServiceOptions {
  /** DELEGATE_DSH_LAUNCHER (name on PATH or absolute path). */
  launcher: string;
  /** DELEGATE_DSH_MODELS_FILE (resolved). */
  modelsFile: string;
  /** What a relative workdir ('.' by default) is relative to. */
  baseDir: string;
  maxConcurrent: number;
  maxPerProject: number;
  maxQueue: number;
  staggerS: number;
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
export type DshPollView = Omit<PollView, "usage" | "effort" | "session_id"> & {
  /** The run dir holding the change (and result.json), to review and apply by hand. */
  out_dir: string | null;
  diff_stat: string | null;
  tokens: unknown;
  wall_s: number | null;
  /** Set when the job was `lost` and a later server killed its verified orphan launcher. */
  orphan_killed?: true;
};

export class DshService {
  private constructor(
    readonly engine: JobEngine,
    private readonly o: DshServiceOptions,
  ) {}

  /**
   * Opens the shared state (fails closed with DlError "storage" when it cannot be
   * written). A missing launcher is logged, not thrown: the server starts and submit_dsh
   * says what to install or set.
   */
  static async start(o: DshServiceOptions): Promise<DshService> {
    const found = findDshLauncher(o.launcher, o.childEnv);
    if (!found.ok) log.warn(`dsh: ${found.message}`);
    const provider = dshProvider({
      launcher: o.launcher,
      childEnv: o.childEnv,
      secretValues: o.secretValues ?? [],
      modelsFile: o.modelsFile,
      baseDir: o.baseDir,
    });
    const engine = await startMachineEngine(
      {
        provider,
        stateDir: o.stateDir,
        maxConcurrent: o.maxConcurrent,
        maxPerProject: o.maxPerProject,
        maxQueue: o.maxQueue,
        staggerMs: Math.round(o.staggerS * 1000),
        guards: o.guards,
        // A dsh run is not replayed: its change would be made twice.
        maxRetries: 0,
      },
      o.engine,
    );
    return new DshService(engine, o);
  }

  /** submit_dsh: the launcher must exist; every task (model allowlist, workdir) is checked before any starts. */
  submit(tasks: readonly unknown[]): Promise<SubmitResult> {
    requireDshLauncher(this.o.launcher, this.o.childEnv);
    return this.engine.submit(tasks);
  }

  /** poll_dsh: per-job snapshots (other servers' jobs read-only) with the run's out_dir and diff stat. */
  poll(ids: readonly string[]): { jobs: (DshPollView | ReturnType<JobEngine["poll"]>[number])[] } {
    return {
      jobs: pollWith(this.engine, ids, (v, row) => this.view(v, row)),
    };
  }

  cancel(id: string): Promise<CancelResult> {
    return this.engine.cancel(id);
  }

  stop(): Promise<void> {
    return this.engine.stop();
  }

  private view(v: PollView, row: JobRow | undefined): DshPollView {
    const { usage: _u, effort: _e, session_id: _s, ...rest } = v;
    const u = jsonColumn(row?.usage);
    const outDir = dshOutDir(join(this.o.stateDir, "jobs", v.id));
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
}
