import { join } from "node:path";
import type { JobRow } from "../../../store/types.ts";
import type { CancelResult, EngineOptions, JobEngine, SubmitResult } from "../../engine.ts";
import { jsonColumn, pollWith, startMachineEngine } from "../../machine-engine.ts";
import type { PollView } from "../../poll.ts";
import { sanitizeJson, sanitizeLine } from "../../sanitize.ts";
import type { WorkspaceGuards } from "../../workspace.ts";
import { type AgentProgress, readAgentProgress } from "./progress.ts";
import { agentProvider } from "./provider.ts";
import { agentProgressFile } from "./task.ts";

/**
 * Everything the agent job tools call: submit_agent → submit, poll_agent → poll,
 * cancel_agent → cancel. Each job is a child `dl run --json`, so the model's machine-wide
 * pool still bounds what reaches the backend, while these caps bound how many agents run.
 */
export interface AgentServiceOptions {
  /** What a relative workdir ('.' by default) is relative to. */
  baseDir: string;
  /** argv prefix that starts this dl again. */
  self: readonly string[];
  /** The child environment (config.dlChildEnv): allowlist plus dl's own settings. */
  env: Readonly<Record<string, string>>;
  /** DELEGATE_LOCAL_AGENTS_DIR (resolved): submit refuses an agent none of the three places has. */
  agentsDir: string;
  maxConcurrent: number;
  maxPerProject: number;
  maxQueue: number;
  /** DELEGATE_AGENT_STATE_DIR (resolved). */
  stateDir: string;
  guards: WorkspaceGuards;
  /** Tests: engine tick, grace, clock; the watcher command. */
  engine?: Partial<EngineOptions>;
}

/** A poll row as poll_agent shows it: the engine's view plus the agent's own result fields. */
export type AgentPollView = Omit<PollView, "usage" | "effort" | "session_id"> & {
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
  /** While running: turn n of max and the last action, from the child's progress file. */
  progress?: AgentProgress;
};

const num = (v: unknown): number | null => (typeof v === "number" ? v : null);
const str = (v: unknown, max = 200): string | null => (typeof v === "string" ? sanitizeLine(v, max) : null);

export class AgentService {
  private constructor(
    readonly engine: JobEngine,
    private readonly o: AgentServiceOptions,
  ) {}

  /** Opens the shared state (fails closed with DlError "storage" when it cannot be written) and reaps dead servers' jobs. */
  static async start(o: AgentServiceOptions): Promise<AgentService> {
    const engine = await startMachineEngine(
      {
        provider: agentProvider({ baseDir: o.baseDir, self: o.self, env: o.env, agentsDir: o.agentsDir }),
        stateDir: o.stateDir,
        maxConcurrent: o.maxConcurrent,
        maxPerProject: o.maxPerProject,
        maxQueue: o.maxQueue,
        // The model pool paces requests; launching a local process needs no stagger.
        staggerMs: 0,
        guards: o.guards,
        // An agent run is not replayed: its changes would be made twice.
        maxRetries: 0,
      },
      o.engine,
    );
    return new AgentService(engine, o);
  }

  /** submit_agent: every task is checked before any is recorded; returns ids and the watch command at once. */
  submit(tasks: readonly unknown[]): Promise<SubmitResult> {
    return this.engine.submit(tasks);
  }

  poll(ids: readonly string[]): { jobs: (AgentPollView | ReturnType<JobEngine["poll"]>[number])[] } {
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

  private view(v: PollView, row: JobRow | undefined): AgentPollView {
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
    };
    if (v.status === "running") {
      const p = readAgentProgress(agentProgressFile(join(this.o.stateDir, "jobs", v.id)), Date.now());
      if (p) view.progress = p;
    }
    return view;
  }
}
