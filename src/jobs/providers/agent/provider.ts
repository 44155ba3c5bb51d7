import { z } from "zod";
import { lookupAgent } from "../../../agent/lookup.ts";
import { delegationOutcomeSchema } from "../../../dispatch/delegation-result.ts";
import { providerEntry } from "../../../providers.ts";
import type { JobRow } from "../../../store/types.ts";
import { outputExcerpt } from "../../../sys/sanitize.ts";
import { jsonColumn } from "../../engine/poll.ts";
import type { FailureClass, ParsedResult, Provider, RunOutput, ValidatedTask } from "../../engine/provider.ts";
import type { ProviderEndpoints } from "./endpoints.ts";
import { jobAnswer } from "./result.ts";
import { agentSpent } from "./spent.ts";
import { type AgentTaskRules, buildAgentLaunch, validateAgentTask } from "./task.ts";

export interface AgentProviderOptions extends AgentTaskRules {
  /** argv prefix that starts this dl again (the compiled binary, or bun + entry script). */
  self: readonly string[];
  /** The child environment: the allowlist plus dl's own settings (config.dlChildEnv). */
  env: Readonly<Record<string, string>>;
  /** DELEGATE_LOCAL_AGENTS_DIR (resolved): where the lookup ends. */
  agentsDir: string;
  /** The endpoints of this server's queued delegate_to_provider jobs (memory only). */
  endpoints: ProviderEndpoints;
}

/**
 * The part of `dl run --json`'s result that poll_agent shows, for a child whose result is
 * not a whole delegation result (an older dl). Loose on purpose: a field the child leaves
 * out is null, never a parse failure.
 */
const count = z.number().int().nonnegative();
const childResult = z.object({
  success: z.boolean(),
  final_response: z.string(),
  turns: count.optional(),
  bash_calls: count.optional(),
  bash_failures: count.optional(),
  last_bash_exit: z.number().int().nullable().optional(),
  usage: z.record(z.string(), z.number()).optional(),
  model_used: z.string().optional(),
  failed_over_from: z.string().optional(),
  steps: count.optional(),
  hit_turn_limit: z.boolean().optional(),
  incomplete: z.boolean().optional(),
  stop_reason: z.string().optional(),
  error: z.string().optional(),
  failure_kind: z.string().optional(),
  conversation_id: z.string().optional(),
});

/** The last line of stdout that is a JSON object (`dl run --json` prints exactly one). */
function lastJson(stdout: string): unknown {
  const lines = stdout.trim().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim();
    if (!l.startsWith("{")) continue;
    try {
      return JSON.parse(l);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Reads a finished `dl run --json`: its result is the answer, and a run whose result says
 * it failed is a failed job even if it exited 0. The whole result but its answer is kept
 * in the row's usage column (the answer is the row's final_response), so the job's task
 * answers with exactly what delegate_to_local_agent would have (result.ts). No result at
 * all (the child could not start, or was killed) is infra, with what it printed.
 */
export function parseAgentRun(out: RunOutput): ParsedResult {
  const json = lastJson(out.stdout);
  const whole = delegationOutcomeSchema().safeParse(json);
  const parsed = whole.success ? whole : childResult.safeParse(json);
  if (!parsed.success) {
    const ended = out.exitCode === null ? `was stopped (${out.signal ?? "signal"})` : `exited ${out.exitCode}`;
    return {
      finalResponse: `the agent run ${ended} without a result\n${outputExcerpt(out)}`,
      usage: null,
      failure: out.exitCode === 0 ? "infra" : null,
    };
  }
  const r = parsed.data;
  const { final_response: _, ...fields } = r;
  // A key the backend refused is the job's auth failure, as a CLI's would be; what the
  // run_bash jail moved out fails it as a Gemini job's jail does; the rest is other.
  const kept = r.failure_kind === "auth" || r.failure_kind === "jail_git_tampered" ? r.failure_kind : "other";
  const failure = r.success ? null : kept;
  return { finalResponse: jobAnswer(r), usage: { ...fields }, failure };
}

/** Background agents as a job-engine provider: each job is a child `dl run` in its own group. */
export function agentProvider(o: AgentProviderOptions): Provider {
  return {
    name: "agent",
    idPrefix: providerEntry("agent").idPrefix,
    validate(raw: unknown): ValidatedTask {
      return validateAgentTask(raw, o);
    },
    // An agent that cannot be found or read is refused now, as delegate_to_local_agent
    // refuses it, not queued to fail in its child minutes later.
    async admit(task: ValidatedTask, workdir: string) {
      const agent = await lookupAgent(String(task.params.agent_name), {
        workdir,
        agentsDir: o.agentsDir,
        surface: "mcp",
      });
      // Kept so a run that prints no result still says where its agent came from (result.ts).
      return { agent_source: agent.source };
    },
    launch(job: JobRow, ctx: { jobDir: string }) {
      return buildAgentLaunch(job, ctx.jobDir, o);
    },
    parse(out: RunOutput): ParsedResult {
      return parseAgentRun(out);
    },
    spent(_job: JobRow, jobDir: string) {
      return agentSpent(jobDir);
    },
    handOffEnv(job: JobRow) {
      const ref = jsonColumn(job.params).provider_ref;
      return typeof ref === "string" ? o.endpoints.handOffEnv(ref) : {};
    },
    /** 126/127: the binary could not run; 2: dl refused its own arguments. Both are ours. */
    classify(out: RunOutput): FailureClass {
      if (out.exitCode === 126 || out.exitCode === 127 || out.exitCode === 2) return "infra";
      return "other";
    },
  };
}
