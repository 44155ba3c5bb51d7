import { resolve } from "node:path";
import { keyMismatch, type StoredConversation } from "../agent/conversation.ts";
import { refusalFailure } from "../agent/failure-kind.ts";
import { type Agent, lookupAgent } from "../agent/lookup.ts";
import { resolveModel } from "../agent/policy.ts";
import type { AgentResult } from "../agent/result.ts";
import type { AgentSettings } from "../agent/settings.ts";
import { type CompleteOptions, complete as httpComplete } from "../backends/client.ts";
import type { Endpoint, ModelRequest, ModelResponse } from "../backends/types.ts";
import type { Config } from "../config.ts";
import { DlError } from "../errors.ts";
import { type Surface, wordsFor } from "../surface.ts";
import { checkWorkdir, workdirGuard } from "../sys/workdir-guard.ts";
import { openTranscript, type TranscriptTarget } from "./delegation-transcript.ts";
import { delegationCost, recordDelegation } from "./delegation-usage.ts";
import { type HeldConversation, holdConversation, loadPrior } from "./follow-up.ts";
import type { DispatchLease } from "./pools.ts";

/**
 * One delegation from request to result, shared by every entry point (the MCP tools and
 * `dl run`): validate, find the agent, pick the model, take a pool slot (which may fail
 * over to another model), run the loop, release the slot.
 */
export type DelegationInput = {
  agent_name: string;
  task: string;
  workdir?: string;
  model?: string;
  max_turns?: number;
  max_tokens?: number;
  /** A finished delegation's conversation_id: continue it with `task` as a new user turn. */
  continue_from?: string;
};

/** A validated delegation, ready to run: every check that can fail early has passed. */
export type PreparedDelegation = {
  input: DelegationInput;
  agent: Agent;
  workdir: string;
  model: string;
  /** The conversation a follow-up continues (checked: same agent, model and workdir). */
  prior?: StoredConversation;
};

/** Takes a slot for `model` (possibly on a failover model); the lease is held for the run. */
export type AcquireSlot = (
  model: string,
  o: { signal: AbortSignal; onWaiting: (msg: string) => void; failover: boolean; task?: string },
) => Promise<DispatchLease>;

export type DelegationResult = AgentResult & { failed_over_from?: string; fallback_note?: string };

export type DelegationContext = {
  config: Config;
  settings: AgentSettings;
  /** Endpoint for a model: the configured gateway, or a fixed provider URL. */
  endpointFor: (model: string) => Endpoint;
  acquire: AcquireSlot;
  /** Fail over to equivalent models when the pool is full (never for explicit providers). */
  failover: boolean;
  signal: AbortSignal;
  onProgress?: (turn: number, maxTurns: number, message: string) => void;
  /** Before each model request (1-based), with the model asked: `dl run` says the first turn started. */
  onModelCall?: (call: number, model: string) => void;
  /** Who reads the errors; MCP tools by default. */
  surface?: Surface;
  /** Injected in tests; production uses the HTTP client. */
  complete?: (req: ModelRequest) => Promise<ModelResponse>;
  completeOptions?: CompleteOptions;
  /** The ledger's kind for this delegation; absent, nothing is recorded (a job's child: its engine records the job). */
  usageKind?: string;
  /** Where the steps are recorded; none given, no transcript is kept. */
  transcript?: TranscriptTarget;
  /** "answered_by: X (requested Y)" when the backend reports another model. */
  fallbackNote?: (requested: string, answered: string, routing: Record<string, string>) => string | undefined;
};

export async function prepareDelegation(
  input: DelegationInput,
  config: Config,
  settings: AgentSettings,
  surface: Surface = "mcp",
): Promise<PreparedDelegation> {
  if (!input.task.trim()) throw new DlError("bad_input", "task is empty; say what the agent should do");
  const prior =
    input.continue_from !== undefined
      ? inWords(surface, () => loadPrior(config.paths.stateDirs.agent, input.continue_from!))
      : undefined;
  // No workdir: a follow-up's own, else the directory `dl run` was started in (MCP clients always pass one).
  const given = input.workdir?.trim() || prior?.workdir || process.cwd();
  const workdir = checkWorkdir(resolve(given), workdirGuard(config.paths));
  const agent = await lookupAgent(input.agent_name, { workdir, agentsDir: config.paths.agentsDir, surface });
  const model = resolveModel({
    explicit: input.model?.trim() || prior?.model || undefined,
    agentName: agent.name,
    defaultModel: settings.defaultModel,
    codingModel: settings.codingModel,
  });
  const why = prior && keyMismatch(prior, { agent: agent.name, workdir, model });
  if (why)
    inWords(surface, () => {
      throw new DlError("bad_input", why);
    });
  return { input, agent, workdir, model, prior };
}

/**
 * Runs `fn`; a follow-up's refusal names the knob as its reader types it: the tool's
 * `continue_from`, or `dl run`'s `--continue-from`.
 */
function inWords<T>(surface: Surface, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof DlError) || surface === "mcp") throw e;
    throw new DlError(e.code, e.message.replaceAll("continue_from", wordsFor(surface).continueFrom), e.data);
  }
}

export async function runPrepared(p: PreparedDelegation, ctx: DelegationContext): Promise<DelegationResult> {
  const started = performance.now();
  let held: HeldConversation | null;
  try {
    held = holdConversation(
      ctx.config.paths.stateDirs.agent,
      { agent: p.agent.name, workdir: p.workdir, model: p.model },
      p.prior?.id,
    );
  } catch (e) {
    return failure(p, e, started);
  }
  try {
    return await runHeld(p, ctx, held, started);
  } finally {
    held?.release();
  }
}

/** A slot of the model's pool, held for the whole run. */
function takeSlot(
  p: PreparedDelegation,
  ctx: DelegationContext,
  held: HeldConversation | null,
): Promise<DispatchLease> {
  return ctx.acquire(p.model, {
    signal: ctx.signal,
    // A follow-up stays on its conversation's model: another one would share none of its cache.
    failover: ctx.failover && !held?.prior,
    task: p.agent.name,
    onWaiting: (msg) => ctx.onProgress?.(0, p.input.max_turns ?? 0, msg),
  });
}

async function runHeld(
  p: PreparedDelegation,
  ctx: DelegationContext,
  held: HeldConversation | null,
  started: number,
): Promise<DelegationResult> {
  let taken: DispatchLease;
  try {
    taken = await takeSlot(p, ctx, held);
  } catch (e) {
    return failure(p, e, started);
  }
  // The slot is held for the whole run and freed however it ends.
  using lease = taken;
  let kept = false;
  let lastResponse: ModelResponse | undefined;
  let calls = 0;
  const doComplete = ctx.complete ?? ((req: ModelRequest) => httpComplete(req, ctx.completeOptions));
  // Loaded on the first run: a server answering initialize or tools/list never pays for the loop.
  const { runAgent } = await import("../agent/loop.ts");
  const transcript = ctx.transcript ? openTranscript(ctx.config, ctx.transcript) : null;
  const result: DelegationResult = await runAgent({
    agent: p.agent,
    task: p.input.task,
    workdir: p.workdir,
    model: lease.model_used,
    max_turns: p.input.max_turns,
    max_tokens: p.input.max_tokens,
    complete: async (req) => {
      ctx.onModelCall?.(++calls, req.model);
      lastResponse = await doComplete(req);
      return lastResponse;
    },
    endpoint: ctx.endpointFor,
    settings: ctx.settings,
    signal: ctx.signal,
    onProgress: ctx.onProgress,
    surface: ctx.surface,
    prior: held?.prior && { messages: held.prior.messages, promptTurns: held.prior.prompt_turns },
    onConversation: (messages, promptTurns) => {
      kept = held?.keep(messages, promptTurns, lease.model_used) ?? false;
    },
    transcript: transcript?.sink,
  });
  if (kept && held) result.conversation_id = held.id;
  if (lease.failed_over_from) {
    result.failed_over_from = lease.failed_over_from;
    result.model = lease.failed_over_from;
    result.model_used = lastResponse?.model || lease.model_used;
  }
  const note = lastResponse && ctx.fallbackNote?.(lease.model_used, lastResponse.model, lastResponse.routing);
  if (note) result.fallback_note = note;
  await recordRun(p, ctx, result, { transcript, started });
  return result;
}

/** After the run: its transcript closed and named, its cost stated, its usage in the ledger. */
async function recordRun(
  p: PreparedDelegation,
  ctx: DelegationContext,
  result: DelegationResult,
  o: { transcript: ReturnType<typeof openTranscript> | null; started: number },
): Promise<void> {
  const t = o.transcript;
  if (t) {
    t.close();
    result.steps = t.sink.steps;
    if (t.logId) result.logs = `dl logs ${t.logId}`;
  }
  result.cost = delegationCost(ctx.config, result);
  if (ctx.usageKind) {
    const at = { kind: ctx.usageKind, id: t?.logId ?? null, elapsedMs: performance.now() - o.started };
    await recordDelegation(ctx.config, p, result, at);
  }
}

/** The result of a run that never started: no slot, or a conversation it cannot continue now. */
function failure(p: PreparedDelegation, e: unknown, started: number): DelegationResult {
  const cancelled = e instanceof DlError && e.code === "cancelled";
  return {
    success: false,
    final_response: "",
    agent_source: p.agent.source,
    model: p.model,
    model_used: p.model,
    turns: 0,
    stop_reason: cancelled ? "cancelled" : "error",
    hit_turn_limit: false,
    incomplete: true,
    nudges: 0,
    resumed_after_nudge: false,
    bash_calls: 0,
    bash_failures: 0,
    last_bash_exit: null,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
    elapsed_s: Math.round((performance.now() - started) / 100) / 10,
    error:
      e instanceof DlError
        ? e.message
        : "no dispatch slot could be taken; try again, or check `dl status` for who holds the pool",
    ...refusalFailure(e),
  };
}
