import { isAbsolute, join, resolve } from "node:path";
import type { z } from "zod";
import { delegationInput } from "../../../dispatch/delegation-fields.ts";
import { DlError } from "../../../errors.ts";
import type { JobRow } from "../../../store/types.ts";
import { rewritePrivate } from "../../../sys/private-file.ts";
import { TRANSCRIPT_FILE } from "../../../usage/transcript-path.ts";
import type { LaunchSpec, ValidatedTask } from "../../engine/provider.ts";
import type { ProviderEndpoints } from "./endpoints.ts";

/**
 * One background agent task: the same input as delegate_to_local_agent (validated by the
 * same schema), run as a child `dl run … --json` so pools, failover and the loop are the
 * ones every other entry point uses.
 */

/** Wall-clock budget of one agent job; the child's own turn budget normally ends it first. */
const AGENT_JOB_TIMEOUT_S = 4 * 3600;

export interface AgentTaskRules {
  /** What a relative or missing workdir is relative to: the directory the server was started in. */
  baseDir: string;
}

/** What the launch needs besides the row's task, workdir and model. */
interface AgentParams {
  agent_name: string;
  max_turns: number | null;
  max_tokens: number | null;
  /** A follow-up: the conversation the child `dl run` continues. */
  continue_from: string | null;
  /** A delegate_to_provider job: its endpoint's reference in ProviderEndpoints (never the key). */
  provider_ref: string | null;
}

/**
 * The field a delegate_to_provider background job adds to its task. Not part of
 * submit_agent's schema (strict), so a model cannot set it; a reference this server did
 * not make finds no endpoint and the job fails before anything runs.
 */
export const PROVIDER_REF_FIELD = "provider_ref";

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 32)));
    return `unknown task field(s) ${keys.join(", ")}; allowed: ${Object.keys(delegationInput().shape).join(", ")}`;
  }
  const where = issue.path.length ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue.message}`;
}

/** The task's own fields, and the endpoint reference a delegate_to_provider job added. */
function splitProviderRef(raw: unknown): { fields: unknown; ref: string | null } {
  if (typeof raw !== "object" || raw === null || !(PROVIDER_REF_FIELD in raw)) return { fields: raw, ref: null };
  const { [PROVIDER_REF_FIELD]: ref, ...fields } = raw as Record<string, unknown>;
  return { fields, ref: typeof ref === "string" ? ref : null };
}

/** Parses one task and fills defaults. Throws DlError bad_input with what to fix. */
export function validateAgentTask(raw: unknown, rules: AgentTaskRules): ValidatedTask {
  const { fields, ref } = splitProviderRef(raw);
  const parsed = delegationInput().safeParse(fields);
  if (!parsed.success) throw new DlError("bad_input", describeIssue(parsed.error.issues[0]!));
  const t = parsed.data;
  // argv carries the name: one that looks like a flag would be read as one.
  if (t.agent_name.startsWith("-")) throw new DlError("bad_input", "agent_name must not start with '-'");
  const workdir = t.workdir ?? ".";
  const params: AgentParams = {
    agent_name: t.agent_name,
    // 0 means auto, as in delegate_to_local_agent.
    max_turns: t.max_turns ? t.max_turns : null,
    max_tokens: t.max_tokens ?? null,
    continue_from: t.continue_from ?? null,
    provider_ref: ref,
  };
  return {
    task: t.task,
    workdir: isAbsolute(workdir) ? workdir : resolve(rules.baseDir, workdir),
    model: t.model ?? null,
    effort: null,
    timeoutS: AGENT_JOB_TIMEOUT_S,
    params: { ...params },
    warnings: [],
  };
}

/** Where a job's files go, inside the engine's private per-job dir. */
const agentTaskFile = (jobDir: string) => join(jobDir, "task.md");
export const agentProgressFile = (jobDir: string) => join(jobDir, "progress.json");
const jobTranscriptFileIn = (jobDir: string) => join(jobDir, TRANSCRIPT_FILE);
const agentQuarantineDir = (jobDir: string) => join(jobDir, "quarantine");

function paramsOf(job: JobRow): AgentParams {
  const p = JSON.parse(job.params ?? "{}") as Partial<AgentParams>;
  if (typeof p.agent_name !== "string") throw new Error("the job has no agent_name");
  return {
    agent_name: p.agent_name,
    max_turns: p.max_turns ?? null,
    max_tokens: p.max_tokens ?? null,
    continue_from: p.continue_from ?? null,
    provider_ref: p.provider_ref ?? null,
  };
}

/**
 * `<dl> run <agent> - --task-file <file> --workdir <dir> [--model m] [--max-turns n]
 * [--max-tokens n] --progress-file <file> --json`. The task goes into a file only this
 * user can read (argv is visible to every local user and one argument is capped at
 * 128 KiB); the gateway settings and keys travel in the environment, and so does a
 * delegate_to_provider job's endpoint and key (taken from this server's memory).
 */
export function buildAgentLaunch(
  job: JobRow,
  jobDir: string,
  o: { self: readonly string[]; env: Readonly<Record<string, string>>; endpoints: ProviderEndpoints },
): LaunchSpec {
  const p = paramsOf(job);
  const providerEnv = p.provider_ref === null ? {} : o.endpoints.takeEnv(p.provider_ref, job.id);
  const taskFile = agentTaskFile(jobDir);
  rewritePrivate(taskFile, job.task);
  const argv = [...o.self, "run", p.agent_name, "-", "--task-file", taskFile, "--workdir", job.workdir];
  if (job.model) argv.push("--model", job.model);
  if (p.max_turns) argv.push("--max-turns", String(p.max_turns));
  if (p.max_tokens) argv.push("--max-tokens", String(p.max_tokens));
  if (p.continue_from) argv.push("--continue-from", p.continue_from);
  argv.push("--progress-file", agentProgressFile(jobDir), "--transcript-file", jobTranscriptFileIn(jobDir));
  // What the run_bash sandbox moves out of the workdir stays with the job (dl show lists it).
  argv.push("--quarantine-dir", agentQuarantineDir(jobDir));
  // Its result is the answer of an MCP tool (poll_agent, a delegation's task): MCP's words.
  argv.push("--answer-for", "mcp", "--json");
  // dl itself: it keeps the host's view of processes (its pid is an owner in the stores).
  return { argv, env: { ...o.env, ...providerEnv }, cwd: job.workdir, selfChild: true };
}
