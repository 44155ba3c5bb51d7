import { awaitJob } from "../../await-job.ts";
import type { CancelResult, EngineOptions, JobEngine, SubmitResult } from "../../engine.ts";
import { startMachineEngine } from "../../machine-engine.ts";
import type { PollView } from "../../poll.ts";
import type { WorkspaceGuards } from "../../workspace.ts";
import { requireAgyBin } from "./bin.ts";
import { requireGeminiAllowed } from "./gate.ts";
import { type GeminiProviderOptions, geminiProvider } from "./provider.ts";

/**
 * Everything the Gemini MCP tools call: delegate_to_gemini → delegate, submit_gemini →
 * submit, poll_gemini → poll, cancel_gemini → cancel. One instance per server process;
 * every instance on the same state dir shares the queue and the caps.
 */

export interface GeminiServiceOptions extends GeminiProviderOptions {
  /** DELEGATE_GEMINI_ALLOW_DANGER: without it every entry point refuses. */
  allowDanger: boolean;
  maxConcurrent: number;
  maxQueue: number;
  /** DELEGATE_GEMINI_STATE_DIR (resolved). */
  stateDir: string;
  guards: WorkspaceGuards;
  /** Tests: clocks, engine tick/grace. */
  engine?: Partial<EngineOptions>;
}

/** What delegate_to_gemini returns: the reference's fields, plus why a job failed. */
interface GeminiResult {
  id: string;
  status: string;
  response: string | null;
  truncated?: true;
  conversation_id: string | null;
  usage: unknown;
  duration_s: number | null;
  exit_code: number | null;
  failure_kind: string | null;
  warnings: unknown[];
}

function geminiResult(v: PollView): GeminiResult {
  return {
    id: v.id,
    status: v.status,
    response: v.final_response,
    ...(v.truncated ? { truncated: v.truncated } : {}),
    conversation_id: v.session_id,
    usage: v.usage,
    duration_s: v.elapsed_s,
    exit_code: v.exit_code,
    failure_kind: v.failure_kind,
    warnings: v.warnings,
  };
}

export class GeminiService {
  private constructor(
    readonly engine: JobEngine,
    private readonly o: GeminiServiceOptions,
  ) {}

  /**
   * Opens the shared state (fails closed with DlError "storage" when it cannot be
   * written) and reaps dead servers' jobs. A missing agy is not checked here: the tools
   * say what to install when they are used.
   */
  static async start(o: GeminiServiceOptions): Promise<GeminiService> {
    const engine = await startMachineEngine(
      {
        provider: geminiProvider(o),
        stateDir: o.stateDir,
        maxConcurrent: o.maxConcurrent,
        // No per-project cap in the reference: one job per workdir and the global cap.
        maxPerProject: o.maxConcurrent,
        maxQueue: o.maxQueue,
        staggerMs: 0,
        guards: o.guards,
        // A replayed prompt would redo whatever agy already changed: never retried.
        maxRetries: 0,
      },
      o.engine,
    );
    return new GeminiService(engine, o);
  }

  /** submit_gemini: the gate and the binary first, then every task before any is queued. */
  submit(tasks: readonly unknown[]): Promise<SubmitResult> {
    requireGeminiAllowed(this.o.allowDanger);
    requireAgyBin(this.o.bin, this.o.childEnv.PATH ?? "");
    return this.engine.submit(tasks);
  }

  poll(ids: readonly string[]): { jobs: ReturnType<JobEngine["poll"]> } {
    requireGeminiAllowed(this.o.allowDanger);
    return { jobs: this.engine.poll(ids) };
  }

  cancel(id: string): Promise<CancelResult> {
    requireGeminiAllowed(this.o.allowDanger);
    return this.engine.cancel(id);
  }

  /** delegate_to_gemini: one job through the same queue and caps, waited for here. */
  async delegate(task: Record<string, unknown>, opts: { signal?: AbortSignal; pollMs?: number } = {}) {
    const r = await this.submit([task]);
    return geminiResult(await awaitJob(this.engine, r.jobs[0]!.id, { tool: "delegate_to_gemini", ...opts }));
  }

  stop(): Promise<void> {
    return this.engine.stop();
  }
}
