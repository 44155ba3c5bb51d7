import { realpath, stat } from "node:fs/promises";
import { isLocalLane } from "../backends/gateway.ts";
import { cachingAllowedFor, resendReasoningFor } from "../backends/route.ts";
import {
  addUsage,
  type Endpoint,
  emptyUsage,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type ToolUseBlock,
  type Usage,
} from "../backends/types.ts";
import { describeError, isDlError } from "../errors.ts";
import { type Surface, wordsFor } from "../surface.ts";
import { learnNamed } from "../sys/redact.ts";
import { continueMessages } from "./conversation.ts";
import { backendFailure, stopFailure } from "./failure-kind.ts";
import { countdownNote, seedPruner, ToolResultPruner } from "./history.ts";
import type { Agent } from "./lookup.ts";
import { resolveMaxTokens, resolveMaxTurns, resolveModel } from "./policy.ts";
import { buildSystemPrompt } from "./prompt.ts";
import { textOf, tidyContent, toolUsesOf } from "./reply-content.ts";
import { type AgentEnd, decideReply, type NudgeState } from "./reply-decision.ts";
import type { AgentResult } from "./result.ts";
import type { AgentSettings } from "./settings.ts";
import { type BashCounters, runToolCalls } from "./tool-calls.ts";
import { toolGrants } from "./tool-grants.ts";
import { buildTools, grantTools } from "./tools/index.ts";
import type { AgentTool, ToolContext } from "./tools/types.ts";
import type { ToolRecord, TranscriptSink } from "./transcript.ts";

export type RunAgentOptions = {
  agent: Agent;
  task: string;
  workdir: string;
  /** Explicit model; otherwise the coding model for coding agents, else the default. */
  model?: string;
  max_turns?: number;
  max_tokens?: number;
  /** One model call. Production passes the backends client (wrapped by dispatch pools). */
  complete: (req: ModelRequest) => Promise<ModelResponse>;
  /** Where requests go; a function when the route depends on the model chosen here. */
  endpoint: Endpoint | ((model: string) => Endpoint);
  settings: AgentSettings;
  signal?: AbortSignal;
  /** Who reads the errors (a model through MCP, or a person through `dl run`). */
  surface?: Surface;
  /** After each turn: for MCP progress notifications and `dl run` stderr lines. */
  onProgress?: (turn: number, maxTurns: number, message: string) => void;
  /** A follow-up: the earlier messages (resent byte for byte) and the turn budget its system prompt named. */
  prior?: { messages: Message[]; promptTurns: number };
  /**
   * Once the run ends, when the model replied at least once: the whole conversation, the
   * final reply included, for a later follow-up (and the budget its prompt names).
   */
  onConversation?: (messages: Message[], promptTurns: number) => void;
  /** Where each model turn and tool call is recorded (dl logs). */
  transcript?: TranscriptSink;
};

/** The model and the limits one run works within. */
export type RunBudget = { model: string; maxTurns: number; maxTokens: number };

/** What the loop counts as it goes; the AgentResult reports it. */
export type RunCounters = Omit<NudgeState, "turn"> &
  BashCounters & {
    turns: number;
    usage: Usage;
    modelUsed: string;
    /** run_bash's jail_git_tampered verdicts: any one fails the run, whatever the model says. */
    tampered: string[];
  };

/** Everything a turn needs, fixed once the workdir and endpoint are known. */
type Conversation = {
  opts: RunAgentOptions;
  budget: RunBudget;
  counters: RunCounters;
  signal: AbortSignal;
  tools: Map<string, AgentTool>;
  ctx: ToolContext;
  /** The request minus the messages, identical on every turn. */
  request: Omit<ModelRequest, "messages">;
  history: Message[];
  pruner: ToolResultPruner;
  /** The turn budget the system prompt names: a follow-up keeps its conversation's. */
  promptTurns: number;
};

/**
 * The tool-calling loop. Always resolves to an AgentResult (never throws): a backend
 * failure, a cancel or a bad workdir come back as `success: false` with an `error` that
 * says what to try, so a batch can report each task on its own.
 */
export async function runAgent(opts: RunAgentOptions): Promise<AgentResult> {
  const started = performance.now();
  const budget = resolveBudget(opts);
  const counters = newCounters();
  const end = await runConversation(opts, budget, counters);
  return agentResult(end, { source: opts.agent.source, model: budget.model, counters, started });
}

async function runConversation(opts: RunAgentOptions, budget: RunBudget, counters: RunCounters): Promise<AgentEnd> {
  const signal = deadlineSignal(opts.signal, opts.settings.dispatchTimeoutMs);
  const workdir = await checkWorkdir(opts.workdir);
  if (typeof workdir !== "string") return workdir;
  let endpoint: Endpoint;
  try {
    endpoint = typeof opts.endpoint === "function" ? opts.endpoint(budget.model) : opts.endpoint;
  } catch (e) {
    return {
      final: "",
      stop: "error",
      error: `no endpoint for model ${budget.model}: ${describeError(e)}`,
      failure: { failure_kind: "bad_config", code: "bad_config" },
    };
  }
  const conv = startConversation(opts, budget, counters, { signal, workdir, endpoint });
  const end = await converse(conv);
  if (counters.turns > 0) opts.onConversation?.(conv.history, conv.promptTurns);
  return end;
}

/** Model, turn budget and output budget, from the caller's choices and the settings. */
export function resolveBudget(
  opts: Pick<RunAgentOptions, "model" | "agent" | "max_turns" | "max_tokens" | "settings">,
): RunBudget {
  const s = opts.settings;
  const model = resolveModel({
    explicit: opts.model,
    agentName: opts.agent.name,
    defaultModel: s.defaultModel,
    codingModel: s.codingModel,
  });
  // The local lane (local-*, ornith*) runs on the user's own hardware: its own budget.
  const isLocal = isLocalLane(model);
  const maxTurns = resolveMaxTurns(
    opts.max_turns,
    isLocal ? (s.defaultMaxTurnsLocal ?? s.defaultMaxTurns) : s.defaultMaxTurns,
  );
  const maxTokens = resolveMaxTokens({
    explicit: opts.max_tokens,
    model,
    reasoningAliases: s.reasoningAliases,
    caps: s.maxTokensCaps,
  });
  return { model, maxTurns, maxTokens };
}

function newCounters(): RunCounters {
  return {
    turns: 0,
    nudges: 0,
    resumed: false,
    lastWasNudge: false,
    beforeNudge: "",
    bashCalls: 0,
    bashFailures: 0,
    lastBashExit: null,
    usage: emptyUsage(),
    modelUsed: "",
    tampered: [],
  };
}

/** The AgentResult for how the run ended plus what was counted on the way. */
export function agentResult(
  end: AgentEnd,
  run: { source: AgentResult["agent_source"]; model: string; counters: RunCounters; started: number },
): AgentResult {
  const c = run.counters;
  const r: AgentResult = {
    success: !end.error && !end.incomplete,
    final_response: end.final,
    agent_source: run.source,
    model: run.model,
    model_used: c.modelUsed || run.model,
    turns: c.turns,
    stop_reason: end.stop,
    hit_turn_limit: end.hitLimit ?? false,
    incomplete: end.incomplete ?? false,
    nudges: c.nudges,
    resumed_after_nudge: c.resumed,
    bash_calls: c.bashCalls,
    bash_failures: c.bashFailures,
    last_bash_exit: c.lastBashExit,
    usage: c.usage,
    elapsed_s: Math.round((performance.now() - run.started) / 100) / 10,
  };
  if (end.error) r.error = end.error;
  // Every failed result says what kind of failure it is, as a failed job does.
  if (!r.success) Object.assign(r, end.failure ?? stopFailure(end.stop));
  if (c.tampered.length > 0) Object.assign(r, tamperedFailure(c.tampered, r.error));
  return r;
}

/**
 * A run whose run_bash jail moved something out fails `jail_git_tampered`, as a Gemini job
 * does, whatever the model answered: each verdict says what moved and where it went.
 */
function tamperedFailure(verdicts: readonly string[], error: string | undefined): Partial<AgentResult> {
  const said = [...new Set(verdicts)].map((v) => `run_bash: ${v}`);
  return {
    success: false,
    error: [...said, ...(error ? [error] : [])].join("\n"),
    failure_kind: "jail_git_tampered",
    code: "workdir_forbidden",
  };
}

/** One signal for the caller's abort and the whole-delegation deadline. */
function deadlineSignal(caller: AbortSignal | undefined, timeoutMs: number | undefined): AbortSignal {
  const signals = [caller, timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined].filter(
    (x): x is AbortSignal => x !== undefined,
  );
  return signals.length ? AbortSignal.any(signals) : new AbortController().signal;
}

/** How a run ends once its signal aborted: a cancel by the caller, else the deadline. */
export function stoppedEnd(callerAborted: boolean, timeoutMs: number | undefined): AgentEnd {
  if (callerAborted) {
    return {
      final: "",
      stop: "cancelled",
      incomplete: true,
      error: "cancelled by the caller; running commands were killed. Files the agent already wrote stay on disk.",
    };
  }
  return {
    final: "",
    stop: "timeout",
    incomplete: true,
    error: `the delegation ran past its ${Math.round((timeoutMs ?? 0) / 1000)} s deadline and was stopped; split the task or raise the deadline`,
  };
}

/** The workdir's realpath, or the end of the run when it is not an existing directory. */
async function checkWorkdir(given: string): Promise<string | AgentEnd> {
  try {
    const workdir = await realpath(given);
    if (!(await stat(workdir)).isDirectory()) throw new Error("not a directory");
    return workdir;
  } catch {
    return {
      final: "",
      stop: "error",
      error: `workdir ${JSON.stringify(given)} is not an existing directory; pass an absolute path to a directory`,
    };
  }
}

function startConversation(
  opts: RunAgentOptions,
  budget: RunBudget,
  counters: RunCounters,
  where: { signal: AbortSignal; workdir: string; endpoint: Endpoint },
): Conversation {
  const s = opts.settings;
  const { model, maxTurns } = budget;
  const all = buildTools({ read: s.read, write: s.write, bash: s.bash });
  const { offered, callable: tools } = grantTools(all, toolGrants(opts.agent.meta.tools).allowed, opts.agent.name);
  const specs = offered.map((t) => t.spec);
  const promptTurns = opts.prior?.promptTurns ?? maxTurns;
  const pruner = new ToolResultPruner({ budgetChars: s.contextBudgetChars, keep: s.keepToolResults });
  const history = opts.prior
    ? continueMessages(opts.prior.messages, opts.task)
    : [{ role: "user" as const, content: opts.task }];
  if (opts.prior) seedPruner(pruner, opts.prior.messages);
  return {
    opts,
    budget,
    counters,
    signal: where.signal,
    tools,
    ctx: { workdir: where.workdir, allowEscape: s.allowPathEscape, signal: where.signal },
    request: {
      endpoint: where.endpoint,
      model,
      system: buildSystemPrompt({
        agent: opts.agent,
        workdir: where.workdir,
        model,
        tools: specs,
        maxTurns: promptTurns,
      }),
      tools: specs,
      max_tokens: budget.maxTokens,
      stream: s.streaming,
      resendReasoning: resendReasoningFor(model, s.resendReasoning),
      promptCaching: s.promptCaching && cachingAllowedFor(model),
      signal: where.signal,
    },
    history,
    pruner,
    promptTurns,
  };
}

/** The turns: call the model, then run its tools, nudge it, or stop. */
async function converse(conv: Conversation): Promise<AgentEnd> {
  const { budget, counters: c, history } = conv;
  const { maxTurns } = budget;
  const policy = {
    maxTurns,
    maxNudges: conv.opts.settings.maxNudges,
    maxTokens: budget.maxTokens,
    surface: conv.opts.surface,
  };
  for (let turn = 1; turn <= maxTurns; turn++) {
    if (conv.signal.aborted) return stopped(conv);
    const resp = await callModel(conv, turn);
    if (!("content" in resp)) return resp;
    const content = tidyContent(resp.content, turn);
    // What the reply names as a credential is learned before any channel writes it.
    learnNamed(JSON.stringify(content));
    const text = textOf(content);
    const uses = toolUsesOf(content);
    if (uses.length === 0) conv.opts.onProgress?.(turn, maxTurns, `turn ${turn}/${maxTurns}: replied without tools`);
    const reply = { text, toolCalls: uses.length, stopReason: resp.stop_reason };
    const decision = decideReply(reply, { ...c, turn }, policy);
    // Tool calls are work resumed after a nudge, and stay in the history, even when the
    // turn budget stops the run here.
    if (uses.length > 0) {
      if (c.lastWasNudge) c.resumed = true;
      c.lastWasNudge = false;
      history.push({ role: "assistant", content });
    }
    if (decision.kind === "stop") {
      // The final reply joins the history, so a follow-up continues after it.
      if (uses.length === 0 && content.length > 0) history.push({ role: "assistant", content });
      return decision.end;
    }
    if (decision.kind === "nudge") {
      c.nudges++;
      c.lastWasNudge = true;
      c.beforeNudge = text;
      history.push({ role: "assistant", content }, { role: "user", content: decision.message });
      continue;
    }
    const ended = await toolTurn(conv, turn, uses);
    if (ended) return ended;
  }
  // Unreachable: the last turn returns above. Kept so the type checker sees a result.
  return { final: "", stop: "max_turns", hitLimit: true, incomplete: true, error: "turn budget exhausted" };
}

function stopped(conv: Conversation): AgentEnd {
  return stoppedEnd(conv.opts.signal?.aborted === true, conv.opts.settings.dispatchTimeoutMs);
}

/** One model call, its usage counted; a failure ends the run with what to try. */
async function callModel(conv: Conversation, turn: number): Promise<ModelResponse | AgentEnd> {
  let resp: ModelResponse;
  const t0 = performance.now();
  try {
    resp = await conv.opts.complete({ ...conv.request, messages: conv.history });
  } catch (e) {
    if (conv.signal.aborted) return stopped(conv);
    // Backend messages end with their own full stop; the advice follows as a sentence.
    const why = (isDlError(e) ? e.message : describeError(e)).replace(/[.\s]+$/, "");
    const check = wordsFor(conv.opts.surface).checkBackend;
    return {
      final: "",
      stop: "error",
      incomplete: true,
      error: `model call ${turn} to ${conv.budget.model} failed: ${why}. To see whether the backend is up and serves this model, ${check}; or try another model.`,
      failure: backendFailure(e),
    };
  }
  const c = conv.counters;
  c.turns = turn;
  c.usage = addUsage(c.usage, resp.usage);
  if (resp.model) c.modelUsed = resp.model;
  conv.opts.transcript?.turn({
    n: turn,
    model: resp.model || conv.budget.model,
    in: resp.usage.input_tokens,
    cached: resp.usage.cache_read_tokens,
    written: resp.usage.cache_write_tokens,
    out: resp.usage.output_tokens,
    stop: String(resp.stop_reason),
    ms: Math.round(performance.now() - t0),
  });
  return resp;
}

/** Runs the turn's tool calls and sends their results back with the turn countdown. */
async function toolTurn(conv: Conversation, turn: number, uses: ToolUseBlock[]): Promise<AgentEnd | undefined> {
  const { maxTurns } = conv.budget;
  const record = conv.opts.transcript && ((r: Omit<ToolRecord, "n">) => conv.opts.transcript?.tool({ n: turn, ...r }));
  const { results, names, tampered } = await runToolCalls(conv.tools, uses, conv.ctx, conv.counters, { record });
  conv.counters.tampered.push(...tampered);
  if (conv.signal.aborted) return stopped(conv);
  const note = countdownNote(maxTurns - turn);
  const last = results[results.length - 1];
  if (note && last) last.content += note;
  conv.history.push({ role: "user", content: results });
  for (let i = 0; i < results.length; i++) conv.pruner.add(results[i]!, uses[i]?.name ?? "tool");
  conv.pruner.settle();
  conv.opts.onProgress?.(turn, maxTurns, `turn ${turn}/${maxTurns}: ${names.join(", ")}`);
  return undefined;
}
