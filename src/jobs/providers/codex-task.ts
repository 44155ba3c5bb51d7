import { join } from "node:path";
import { DlError } from "../../errors.ts";
import type { JobRow } from "../../store/types.ts";
import type { LaunchSpec, ValidatedTask } from "../provider.ts";
import { resolveCodexEffort, resolveCodexModel } from "./codex-models.ts";

/**
 * One Codex task: what a caller may ask for, and the `codex exec` command that runs it.
 */

export const CODEX_SANDBOXES = ["read-only", "workspace-write", "danger-full-access"] as const;
type CodexSandbox = (typeof CODEX_SANDBOXES)[number];

const DEFAULT_TIMEOUT_S = 1800;
const MAX_TIMEOUT_S = 24 * 3600;
/** The prompt travels as one argv string; Linux refuses a single argument over 128 KiB. */
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

const KNOWN = new Set(["task", "workdir", "model", "effort", "sandbox", "timeout_s", "allow_over_quota"]);

export function validateCodexTask(raw: unknown, rules: TaskRules): ValidatedTask & { allowOverQuota: boolean } {
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new DlError(
      "bad_input",
      "each task must be an object {task, workdir, model?, effort?, sandbox?, timeout_s?}",
    );
  const t = raw as Record<string, unknown>;
  const extra = Object.keys(t).filter((k) => !KNOWN.has(k));
  if (extra.length)
    throw new DlError(
      "bad_input",
      `unknown task field(s) ${extra
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 32)))
        .join(", ")}; allowed: ${[...KNOWN].join(", ")}`,
    );
  if (typeof t.task !== "string" || t.task.trim() === "")
    throw new DlError("bad_input", "task must be a non-empty string: the instructions for Codex");
  if (Buffer.byteLength(t.task) > MAX_TASK_BYTES) {
    throw new DlError(
      "bad_input",
      `task is over ${MAX_TASK_BYTES} bytes; put the details in a file inside the workdir and point the task at it`,
    );
  }
  if (typeof t.workdir !== "string")
    throw new DlError(
      "bad_input",
      "workdir must be the absolute path of a checkout or worktree (one job per worktree)",
    );
  const { model, alias } = resolveCodexModel(t.model, rules.defaultModel);
  const effort = resolveCodexEffort(t.effort);
  let sandbox: CodexSandbox = "workspace-write";
  if (t.sandbox !== undefined && t.sandbox !== null) {
    if (typeof t.sandbox !== "string" || !(CODEX_SANDBOXES as readonly string[]).includes(t.sandbox)) {
      throw new DlError("bad_input", `sandbox must be one of ${CODEX_SANDBOXES.join(", ")} (default workspace-write)`);
    }
    sandbox = t.sandbox as CodexSandbox;
  }
  if (sandbox === "danger-full-access" && !rules.allowDanger) {
    throw new DlError(
      "bad_input",
      "sandbox danger-full-access is disabled: it lets Codex change anything the user can; the user must set DELEGATE_CODEX_ALLOW_DANGER=1 to allow it, else use workspace-write",
    );
  }
  let timeoutS = rules.defaultTimeoutS ?? DEFAULT_TIMEOUT_S;
  if (t.timeout_s !== undefined && t.timeout_s !== null) {
    if (
      typeof t.timeout_s !== "number" ||
      !Number.isFinite(t.timeout_s) ||
      t.timeout_s <= 0 ||
      t.timeout_s > MAX_TIMEOUT_S
    ) {
      throw new DlError("bad_input", `timeout_s must be a number of seconds from 1 to ${MAX_TIMEOUT_S}`);
    }
    timeoutS = t.timeout_s;
  }
  if (t.allow_over_quota !== undefined && typeof t.allow_over_quota !== "boolean")
    throw new DlError("bad_input", "allow_over_quota must be true or false");
  const params: CodexParams = { sandbox, alias };
  return {
    task: t.task,
    workdir: t.workdir,
    model,
    effort,
    timeoutS,
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

/** A TOML basic string: `-c key=value` parses the value as TOML. */
const toml = (s: string) => JSON.stringify(s);

export interface LaunchInputs {
  /** Resolved path of the codex binary. */
  bin: string;
  codexHome: string;
  /** The allowlisted child environment (config.childEnv). */
  childEnv: Readonly<Record<string, string>>;
  allowDanger: boolean;
}

/**
 * `codex exec --json` in the workdir, stdin closed by the engine. Each run gets its own
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
  argv.push("--", job.task);
  return { argv, env: { ...o.childEnv, CODEX_HOME: o.codexHome }, cwd: job.workdir };
}
