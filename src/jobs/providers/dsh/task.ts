import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { once } from "../../../once.ts";
import type { JobRow } from "../../../store/types.ts";
import { rewritePrivate } from "../../../sys/private-file.ts";
import type { LaunchSpec, ValidatedTask } from "../../engine/provider.ts";
import { parseTask, taskText, timeoutSeconds } from "../../task-input.ts";
import { type DshModel, loadDshModels, resolveDshModel } from "./models.ts";

/**
 * One dsh task: what a caller may ask for, and the launcher command that runs it.
 */

export const DSH_DEFAULT_TIMEOUT_S = 2400;
const MAX_TIMEOUT_S = 24 * 3600;
/** The task travels in a file, not argv, so the only limit is what a model should be handed. */
const MAX_TASK_BYTES = 1_000_000;

/**
 * One dsh task as callers may send it: the single definition of its shape, used by the
 * MCP tools (which publish its JSON Schema) and by the engine's submit. The model is
 * checked against the allowlist file afterwards (validateDshTask), since that file can
 * change while the server runs.
 */
export const dshTaskInput = once(() =>
  z
    .object({
      task: taskText(
        "the dsh run",
        MAX_TASK_BYTES,
        "what the harness should do in workdir; code only, never PHI or personal data",
      ),
      model: z
        .string({ error: "model is required: an enabled alias from DELEGATE_DSH_MODELS_FILE" })
        .min(1, "model is required: an enabled alias from DELEGATE_DSH_MODELS_FILE")
        .max(200, "model is at most 200 characters")
        .describe("an enabled alias (or its real model name) from the dsh models file; MiMo/Xiaomi models are refused"),
      workdir: z
        .string({ error: "workdir must be a path to a checkout or worktree (one job per worktree)" })
        .min(1, "workdir must be a path to a checkout or worktree (one job per worktree)")
        .optional()
        .describe(
          "the git worktree this job works in (default '.', the directory the server was started in); one job per worktree",
        ),
      timeout_s: timeoutSeconds(MAX_TIMEOUT_S, DSH_DEFAULT_TIMEOUT_S, "the launcher's process group is killed"),
    })
    .strict(),
);

export interface DshTaskRules {
  /** DELEGATE_DSH_MODELS_FILE (resolved). */
  modelsFile: string;
  /** What a relative workdir is relative to: the directory the server was started in. */
  baseDir: string;
}

/** The entry's alias, which the launcher is given; the row stores the real model for display. */
interface DshParams {
  alias: string;
}

/**
 * What `--model` says: the alias (the key of the models file's entry). The models file has
 * the launcher's own models.json shape (by default it is that file), so the launcher looks
 * the alias up itself; a resolved name is not a key there. A row from before the alias was
 * kept falls back to its model.
 */
function launcherModel(job: JobRow): string {
  try {
    const alias = (JSON.parse(job.params ?? "null") as Partial<DshParams> | null)?.alias;
    if (typeof alias === "string" && alias) return alias;
  } catch {
    // A malformed params column: the stored model is all there is.
  }
  if (!job.model) throw new Error("the job has no model");
  return job.model;
}

/**
 * Parses one task, then checks its model against the allowlist file (read afresh, so an
 * edit takes effect without a restart). Throws DlError bad_input / bad_config.
 */
export function validateDshTask(raw: unknown, rules: DshTaskRules): ValidatedTask {
  const t = parseTask(dshTaskInput(), raw);
  const m: DshModel = resolveDshModel(t.model, loadDshModels(rules.modelsFile), rules.modelsFile);
  const workdir = t.workdir ?? ".";
  const params: DshParams = { alias: m.alias };
  return {
    task: t.task,
    workdir: isAbsolute(workdir) ? workdir : resolve(rules.baseDir, workdir),
    model: m.model,
    effort: null,
    timeoutS: t.timeout_s ?? DSH_DEFAULT_TIMEOUT_S,
    params: { ...params },
    warnings: t.model === m.alias && m.alias !== m.model ? [`model alias ${m.alias} → ${m.model}`] : [],
  };
}

/** Where a job's files go, inside the engine's private per-job dir. */
export const dshTaskFile = (jobDir: string) => join(jobDir, "task.md");
export const dshOutDir = (jobDir: string) => join(jobDir, "out");
export const dshResultFile = (jobDir: string) => join(dshOutDir(jobDir), "result.json");

/**
 * `<launcher> --cwd <workdir> --model <model> --task-file <file> --out-dir <dir>`. The
 * task goes into a file only this user can read: argv is visible to every local user.
 */
export function buildDshLaunch(
  job: JobRow,
  jobDir: string,
  o: { launcher: string; childEnv: Readonly<Record<string, string>> },
): LaunchSpec {
  const model = launcherModel(job);
  const taskFile = dshTaskFile(jobDir);
  rewritePrivate(taskFile, job.task);
  const argv = [
    o.launcher,
    "--cwd",
    job.workdir,
    "--model",
    model,
    "--task-file",
    taskFile,
    "--out-dir",
    dshOutDir(jobDir),
  ];
  return { argv, env: { ...o.childEnv }, cwd: job.workdir };
}
