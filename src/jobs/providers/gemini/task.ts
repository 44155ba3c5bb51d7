import { z } from "zod";
import { once } from "../../../once.ts";
import type { JobRow } from "../../../store/types.ts";
import type { ValidatedTask } from "../../engine/provider.ts";
import { parseTask, taskText, timeoutSeconds } from "../../task-input.ts";

/**
 * One Gemini task: what a caller may ask for, and the `agy` command line that runs it.
 */

const GEMINI_EFFORTS = ["low", "medium", "high"] as const;
type GeminiEffort = (typeof GEMINI_EFFORTS)[number];

const GEMINI_DEFAULT_TIMEOUT_S = 1800;
const GEMINI_MAX_TIMEOUT_S = 24 * 3600;
/** The prompt travels as one argv string; Linux refuses a single argument over 128 KiB. */
const GEMINI_MAX_TASK_BYTES = 120_000;

/** Only these models are exposed: the `claude-*` and `gpt-oss` ones `agy models` lists are not. */
const geminiModel = (effort: GeminiEffort) => `gemini-3.8-flash-${effort}`;

const EFFORT_RULE = `effort must be one of ${GEMINI_EFFORTS.join(", ")} (default low): it picks gemini-3.8-flash-<effort>`;
const WORKDIR_RULE = "workdir must be the absolute path of a checkout or worktree (one job per workdir)";

/**
 * One Gemini task as callers may send it: the single definition of its shape, used by the
 * MCP tools (which publish its JSON Schema) and by the engine's submit.
 */
export const geminiTaskInput = once(() =>
  z
    .object({
      task: taskText(
        "Gemini",
        GEMINI_MAX_TASK_BYTES,
        "what Gemini should do; agy edits files and runs commands in workdir without asking",
      ),
      workdir: z
        .string({ error: WORKDIR_RULE })
        .min(1, WORKDIR_RULE)
        .describe("absolute path of a git checkout or worktree for this job (one job per workdir; not $HOME or /)"),
      effort: z
        .enum(GEMINI_EFFORTS, { error: EFFORT_RULE })
        .optional()
        .describe("low (default), medium or high: the model is gemini-3.8-flash-<effort>"),
      timeout_s: timeoutSeconds(GEMINI_MAX_TIMEOUT_S, GEMINI_DEFAULT_TIMEOUT_S, "the jail and agy are killed"),
    })
    .strict(),
);

/** Parses one task with geminiTaskInput and fills the defaults. Throws DlError bad_input. */
export function validateGeminiTask(raw: unknown, defaultTimeoutS = GEMINI_DEFAULT_TIMEOUT_S): ValidatedTask {
  const t = parseTask(geminiTaskInput(), raw);
  const effort: GeminiEffort = t.effort ?? "low";
  return {
    task: t.task,
    workdir: t.workdir,
    model: geminiModel(effort),
    effort,
    timeoutS: t.timeout_s ?? defaultTimeoutS,
    params: {},
    warnings: [],
  };
}

/** The effort a row was submitted with; an unknown value (a newer dl's row) runs as low. */
function rowEffort(job: JobRow): GeminiEffort {
  return (GEMINI_EFFORTS as readonly string[]).includes(job.effort ?? "") ? (job.effort as GeminiEffort) : "low";
}

/**
 * `agy -p` in JSON mode. Without -p agy opens its TUI and hangs; the engine closes stdin.
 * It cannot ask before acting, hence --dangerously-skip-permissions and the jail around it.
 */
export function agyArgv(bin: string, job: JobRow): string[] {
  return [
    bin,
    "-p",
    job.task,
    "--output-format",
    "json",
    "--dangerously-skip-permissions",
    "--model",
    geminiModel(rowEffort(job)),
  ];
}
