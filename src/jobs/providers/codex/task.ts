import { join } from "node:path";
import { z } from "zod";
import { DlError } from "../../../errors.ts";
import { once } from "../../../once.ts";
import type { JobRow } from "../../../store/types.ts";
import { rewritePrivate } from "../../../sys/private-file.ts";
import type { LaunchSpec, ValidatedTask } from "../../engine/provider.ts";
import { parseTask, taskText, timeoutSeconds } from "../../task-input.ts";
import { resolveCodexEffort, resolveCodexModel } from "./models.ts";

/**
 * One Codex task: what a caller may ask for, and the `codex exec` command that runs it.
 */

const CODEX_SANDBOXES = ["read-only", "workspace-write", "danger-full-access"] as const;
type CodexSandbox = (typeof CODEX_SANDBOXES)[number];

const DEFAULT_TIMEOUT_S = 1800;
const MAX_TIMEOUT_S = 24 * 3600;
/** A task's cap (what a model should be handed; it once travelled in argv, where Linux refuses one argument over 128 KiB). */
const MAX_TASK_BYTES = 120_000;

interface CodexParams {
  sandbox: CodexSandbox;
  /** The alias the caller used, when any (the row stores the resolved model). */
  alias: string | null;
}

export interface TaskRules {
  defaultModel: string;
  allowDanger: boolean;
  defaultTimeoutS?: number;
}

/**
 * One Codex task as callers may send it: the single definition of its shape, used by the
 * MCP tools (which publish its JSON Schema) and by the engine's submit (which every
 * caller goes through). What depends on the configuration (model names, the danger
 * sandbox, the default timeout) is checked by validateCodexTask afterwards.
 */
export const codexTaskInput = once(() =>
  z
    .object({
      task: taskText(
        "Codex",
        MAX_TASK_BYTES,
        "what Codex should do; it edits files and runs commands in workdir on its own",
      ),
      workdir: z
        .string({ error: "workdir must be the absolute path of a checkout or worktree (one job per worktree)" })
        .min(1, "workdir must be the absolute path of a checkout or worktree (one job per worktree)")
        .describe("absolute path of a git worktree for this job (one job per worktree; not $HOME or /)"),
      model: z
        .string({ error: "model must be a string" })
        .optional()
        .describe("plan model or alias (default gpt-6.1-terra; also gpt-6.1-sol, gpt-6-astra, gpt-6-luna, sol, luna…)"),
      effort: z.string({ error: "effort must be a string" }).optional().describe("reasoning effort, default low"),
      sandbox: z
        .enum(CODEX_SANDBOXES, {
          error: `sandbox must be one of ${CODEX_SANDBOXES.join(", ")} (default workspace-write)`,
        })
        .optional()
        .describe("default workspace-write; danger-full-access only where the user allowed it"),
      timeout_s: timeoutSeconds(MAX_TIMEOUT_S, DEFAULT_TIMEOUT_S, "the process group is killed"),
      allow_over_quota: z
        .boolean({ error: "allow_over_quota must be true or false" })
        .optional()
        .describe("run even above the user's quota limit"),
    })
    .strict(),
);

/** Parses one task with codexTaskInput, then applies the configured rules. Throws DlError bad_input. */
export function validateCodexTask(raw: unknown, rules: TaskRules): ValidatedTask & { allowOverQuota: boolean } {
  const t = parseTask(codexTaskInput(), raw);
  const { model, alias } = resolveCodexModel(t.model, rules.defaultModel);
  const effort = resolveCodexEffort(t.effort);
  const sandbox: CodexSandbox = t.sandbox ?? "workspace-write";
  if (sandbox === "danger-full-access" && !rules.allowDanger) {
    throw new DlError(
      "bad_input",
      "sandbox danger-full-access is disabled: it lets Codex change anything the user can; the user must set DELEGATE_CODEX_ALLOW_DANGER=1 to allow it, else use workspace-write",
    );
  }
  const params: CodexParams = { sandbox, alias };
  return {
    task: t.task,
    workdir: t.workdir,
    model,
    effort,
    timeoutS: t.timeout_s ?? rules.defaultTimeoutS ?? DEFAULT_TIMEOUT_S,
    params: { ...params },
    warnings: [],
    allowOverQuota: t.allow_over_quota === true,
  };
}

function codexParams(job: JobRow): CodexParams {
  let p: Partial<CodexParams> = {};
  try {
    p = job.params ? (JSON.parse(job.params) as Partial<CodexParams>) : {};
  } catch {
    // A row written by a newer dl: run with the safe default.
  }
  const sandbox = (CODEX_SANDBOXES as readonly string[]).includes(p.sandbox ?? "")
    ? (p.sandbox as CodexSandbox)
    : "workspace-write";
  return { sandbox, alias: typeof p.alias === "string" ? p.alias : null };
}

/** Where a job's private files go (inside the engine's per-job dir). */
export const lastMessageFile = (jobDir: string) => join(jobDir, "last-message.txt");
const sqliteHome = (jobDir: string) => join(jobDir, "sqlite");
/** The task, which the CLI reads on its stdin (`-` as the prompt). */
const codexTaskFile = (jobDir: string) => join(jobDir, "task.md");

/** A TOML basic string: `-c key=value` parses the value as TOML. */
const toml = (s: string) => JSON.stringify(s);

export interface LaunchInputs {
  /** Resolved path of the codex binary. */
  bin: string;
  codexHome: string;
  /** The Codex child environment (config.codexChildEnv: the allowlist plus DELEGATE_CODEX_ENV_PASSTHROUGH). */
  childEnv: Readonly<Record<string, string>>;
  allowDanger: boolean;
}

/**
 * `codex exec --json` in the workdir, its prompt read from a file only this user can read
 * on its stdin: argv is visible to every local user. Each run gets its own
 * SQLite home so parallel runs do not contend on one database, while the login stays in
 * the shared CODEX_HOME; forced_login_method pins the subscription login, so a stray
 * OPENAI_API_KEY can never switch billing to an API account.
 */
export function buildCodexLaunch(job: JobRow, jobDir: string, o: LaunchInputs): LaunchSpec {
  const p = codexParams(job);
  if (p.sandbox === "danger-full-access" && !o.allowDanger) {
    throw new DlError(
      "bad_input",
      "danger-full-access was allowed at submit but DELEGATE_CODEX_ALLOW_DANGER is off now",
    );
  }
  const argv = [
    o.bin,
    "exec",
    "--json",
    // The engine already checked the workdir (not $HOME or /, one job per worktree).
    "--skip-git-repo-check",
    "--sandbox",
    p.sandbox,
    "-c",
    `model_reasoning_effort=${toml(job.effort ?? "low")}`,
    "-c",
    `sqlite_home=${toml(sqliteHome(jobDir))}`,
    "-c",
    `forced_login_method=${toml("chatgpt")}`,
    "--output-last-message",
    lastMessageFile(jobDir),
  ];
  if (job.model) argv.push("--model", job.model);
  const taskFile = codexTaskFile(jobDir);
  rewritePrivate(taskFile, job.task);
  argv.push("--", "-");
  return { argv, env: { ...o.childEnv, CODEX_HOME: o.codexHome }, cwd: job.workdir, stdinFile: taskFile };
}
