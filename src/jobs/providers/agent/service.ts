import type { Config } from "../../../config.ts";
import type { ProviderTarget } from "../../../dispatch/provider-endpoint.ts";
import { runProviderTarget } from "../../../dispatch/provider-endpoint.ts";
import type { JobRow } from "../../../store/types.ts";
import { jobDirOf } from "../../../sys/paths.ts";
import { sanitizeJson, sanitizeLine } from "../../../sys/sanitize.ts";
import { selfArgv } from "../../../sys/self-command.ts";
import type { SubmitResult } from "../../engine/engine.ts";
import { jsonColumn, type PollView } from "../../engine/poll.ts";
import { JobService, type ServiceContext } from "../../service.ts";
import { ProviderEndpoints } from "./endpoints.ts";
import { type AgentProgress, readAgentProgress } from "./progress.ts";
import { agentProvider } from "./provider.ts";
import { providerKeyLost } from "./result.ts";
import { agentProgressFile, PROVIDER_REF_FIELD } from "./task.ts";

/**
 * The agent provider's job service: submit_agent, poll_agent, cancel_agent on the generic
 * JobService. Each job is a child `dl run --json`, so the model's machine-wide pool still
 * bounds what reaches the backend, while these caps bound how many agents run.
 */

/** A poll row as poll_agent shows it: the engine's view plus the agent's own result fields. */
type AgentPollView = Omit<PollView, "usage" | "effort" | "session_id"> & {
  agent_name: string | null;
  success: boolean | null;
  turns: number | null;
  bash_calls: number | null;
  bash_failures: number | null;
  last_bash_exit: number | null;
  usage: unknown;
  model_used: string | null;
  failed_over_from: string | null;
  /** The finished run's conversation, for a follow-up (continue_from). */
  conversation_id: string | null;
  /** Model turns plus tool calls the child recorded, and the command that prints them. */
  steps: number | null;
  logs: string;
  /** While running: turn n of max and the last action, from the child's progress file. */
  progress?: AgentProgress;
};

const num = (v: unknown): number | null => (typeof v === "number" ? v : null);
const str = (v: unknown, max = 200): string | null => (typeof v === "string" ? sanitizeLine(v, max) : null);

export type AgentService = JobService<AgentPollView> & {
  /**
   * delegate_to_provider as a background job: one agent job whose child talks to `target`.
   * The target stays in this server's memory until the launch (endpoints.ts).
   */
  submitToProvider(task: Readonly<Record<string, unknown>>, target: ProviderTarget): Promise<SubmitResult>;
};

/**
 * This provider's jobs under the Config, relative workdirs resolved against the server's
 * folder. Opens the shared state (fails closed with DlError "storage" when it cannot be
 * written) and reaps dead servers' jobs.
 */
export async function startJobs(c: Config, ctx: ServiceContext): Promise<AgentService> {
  // A supervisor's delegate_to_provider job: its endpoint was handed over in DELEGATE_RUN_PROVIDER_*.
  const endpoints = new ProviderEndpoints(runProviderTarget(c.backend.runProvider));
  // The child environment (config.dlChildEnv): the allowlist plus dl's own settings.
  // Submit refuses an agent none of the three places has (DELEGATE_LOCAL_AGENTS_DIR the last).
  const provider = agentProvider({
    baseDir: ctx.baseDir,
    self: selfArgv(),
    env: c.dlChildEnv,
    agentsDir: c.paths.agentsDir,
    endpoints,
  });
  // The model pool paces requests; launching a local process needs no stagger (caps.staggerS is 0).
  const service = await JobService.start(c, ctx, {
    provider,
    caps: c.agentJobs.caps,
    // An agent run is not replayed: its changes would be made twice.
    maxRetries: 0,
    view: (v, row) => agentView(v, row, ctx.stateDir),
    // A cancelled provider job never launches: its endpoint (and key) leave memory with it.
    cancelled: (row) => {
      const ref = jsonColumn(row?.params).provider_ref;
      if (typeof ref === "string") endpoints.drop(ref);
    },
  });
  return Object.assign(service, {
    async submitToProvider(task: Readonly<Record<string, unknown>>, target: ProviderTarget) {
      const ref = endpoints.put(target);
      try {
        return await service.engine.submit([{ ...task, [PROVIDER_REF_FIELD]: ref }]);
      } catch (e) {
        endpoints.drop(ref);
        throw e;
      }
    },
  });
}

/** Async: a running job's progress file is the child's, read through the bounded reader. */
async function agentView(v: PollView, row: JobRow | undefined, stateDir: string): Promise<AgentPollView> {
  const { usage: _u, effort: _e, session_id: _s, ...rest } = v;
  const r = jsonColumn(row?.usage);
  const params = jsonColumn(row?.params);
  const view: AgentPollView = {
    ...rest,
    agent_name: str(params.agent_name, 128),
    success: typeof r.success === "boolean" ? r.success : null,
    turns: num(r.turns),
    bash_calls: num(r.bash_calls),
    bash_failures: num(r.bash_failures),
    last_bash_exit: num(r.last_bash_exit),
    usage: sanitizeJson(r.usage ?? null),
    model_used: str(r.model_used),
    failed_over_from: str(r.failed_over_from),
    conversation_id: str(r.conversation_id, 64),
    steps: num(r.steps),
    logs: `dl logs ${v.id}`,
  };
  const lostKey = row && v.status === "lost" && !v.failure_kind ? providerKeyLost({ ...row, status: "lost" }) : null;
  if (lostKey) {
    view.failure_kind = "provider_key_lost";
    view.final_response ??= lostKey;
  }
  if (v.status === "running") {
    const p = await readAgentProgress(agentProgressFile(jobDirOf(stateDir, v.id)), Date.now());
    if (p) view.progress = p;
  }
  return view;
}
