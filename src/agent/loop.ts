import { realpath, stat } from "node:fs/promises";
import { cachingAllowedFor, resendReasoningFor } from "../backends/route.ts";
import { toolInputError } from "../backends/tool-input.ts";
import {
  addUsage,
  type ContentBlock,
  type Endpoint,
  emptyUsage,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type ToolResultBlock,
  type ToolUseBlock,
  type Usage,
} from "../backends/types.ts";
import { describeError, isDlError } from "../errors.ts";
import { countdownNote, NUDGE_TEXT, ToolResultPruner } from "./history.ts";
import type { Agent } from "./lookup.ts";
import { announcesWork, resolveMaxTokens, resolveMaxTurns, resolveModel } from "./policy.ts";
import { buildSystemPrompt } from "./prompt.ts";
import type { AgentResult } from "./result.ts";
import type { AgentSettings } from "./settings.ts";
import { buildTools } from "./tools/index.ts";
import type { AgentTool, ToolContext, ToolOutcome } from "./tools/types.ts";

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
  /** After each turn: for MCP progress notifications and `dl run` stderr lines. */
  onProgress?: (turn: number, maxTurns: number, message: string) => void;
};

type Counters = {
  turns: number;
  nudges: number;
  resumed: boolean;
  bashCalls: number;
  bashFailures: number;
  lastBashExit: number | null;
  usage: Usage;
  modelUsed: string;
};

/**
 * The tool-calling loop. Always resolves to an AgentResult (never throws): a backend
 * failure, a cancel or a bad workdir come back as `success: false` with an `error` that
 * says what to try, so a batch can report each task on its own.
 */
export async function runAgent(opts: RunAgentOptions): Promise<AgentResult> {
  const started = performance.now();
  const s = opts.settings;
  const model = resolveModel({
    explicit: opts.model,
    agentName: opts.agent.name,
    defaultModel: s.defaultModel,
    codingModel: s.codingModel,
  });
  // The local lane (local-*, ornith*) runs on the user's own hardware: its own budget.
  const isLocal = /^(local-|ornith)/i.test(model);
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
  const c: Counters = {
    turns: 0,
    nudges: 0,
    resumed: false,
    bashCalls: 0,
    bashFailures: 0,
    lastBashExit: null,
    usage: emptyUsage(),
    modelUsed: "",
  };
  const finish = (f: {
    final: string;
    stop: string;
    hitLimit?: boolean;
    incomplete?: boolean;
    error?: string;
  }): AgentResult => {
    const r: AgentResult = {
      success: !f.error && !f.incomplete,
      final_response: f.final,
      agent_source: opts.agent.source,
      model,
      model_used: c.modelUsed || model,
      turns: c.turns,
      stop_reason: f.stop,
      hit_turn_limit: f.hitLimit ?? false,
      incomplete: f.incomplete ?? false,
      nudges: c.nudges,
      resumed_after_nudge: c.resumed,
      bash_calls: c.bashCalls,
      bash_failures: c.bashFailures,
      last_bash_exit: c.lastBashExit,
      usage: c.usage,
      elapsed_s: Math.round((performance.now() - started) / 100) / 10,
    };
    if (f.error) r.error = f.error;
    return r;
  };

  // One signal for the caller's abort and the whole-delegation deadline.
  const signals = [opts.signal, s.dispatchTimeoutMs ? AbortSignal.timeout(s.dispatchTimeoutMs) : undefined].filter(
    (x): x is AbortSignal => x !== undefined,
  );
  const signal = signals.length ? AbortSignal.any(signals) : new AbortController().signal;
  const stopped = (): AgentResult => {
    if (opts.signal?.aborted) {
      return finish({
        final: "",
        stop: "cancelled",
        incomplete: true,
        error: "cancelled by the caller; running commands were killed. Files the agent already wrote stay on disk.",
      });
    }
    return finish({
      final: "",
      stop: "timeout",
      incomplete: true,
      error: `the delegation ran past its ${Math.round((s.dispatchTimeoutMs ?? 0) / 1000)} s deadline and was stopped; split the task or raise the deadline`,
    });
  };

  let workdir: string;
  try {
    workdir = await realpath(opts.workdir);
    if (!(await stat(workdir)).isDirectory()) throw new Error("not a directory");
  } catch {
    return finish({
      final: "",
      stop: "error",
      error: `workdir ${JSON.stringify(opts.workdir)} is not an existing directory; pass an absolute path to a directory`,
    });
  }
  let endpoint: Endpoint;
  try {
    endpoint = typeof opts.endpoint === "function" ? opts.endpoint(model) : opts.endpoint;
  } catch (e) {
    return finish({ final: "", stop: "error", error: `no endpoint for model ${model}: ${describeError(e)}` });
  }

  const tools = buildTools({ read: s.read, write: s.write, bash: s.bash });
  const specs = [...tools.values()].map((t) => t.spec);
  const system = buildSystemPrompt({ agent: opts.agent, workdir, model, tools: specs, maxTurns });
  const ctx: ToolContext = { workdir, allowEscape: s.allowPathEscape, signal };
  const history: Message[] = [{ role: "user", content: opts.task }];
  const pruner = new ToolResultPruner({ budgetChars: s.contextBudgetChars, keep: s.keepToolResults });
  const promptCaching = s.promptCaching && cachingAllowedFor(model);
  const resendReasoning = resendReasoningFor(model, s.resendReasoning);
  let lastWasNudge = false;
  /** Text of the turn a nudge interrupted: part of the report if the agent then just ends. */
  let beforeNudge = "";

  for (let turn = 1; turn <= maxTurns; turn++) {
    if (signal.aborted) return stopped();
    let resp: ModelResponse;
    try {
      resp = await opts.complete({
        endpoint,
        model,
        system,
        messages: history,
        tools: specs,
        max_tokens: maxTokens,
        stream: s.streaming,
        resendReasoning,
        promptCaching,
        signal,
      });
    } catch (e) {
      if (signal.aborted) return stopped();
      const why = isDlError(e) ? e.message : describeError(e);
      return finish({
        final: "",
        stop: "error",
        incomplete: true,
        error: `model call ${turn} to ${model} failed: ${why}. Check that the backend is up and serves this model (local_backend_status), or try another model.`,
      });
    }
    c.turns = turn;
    c.usage = addUsage(c.usage, resp.usage);
    if (resp.model) c.modelUsed = resp.model;
    const content = tidyContent(resp.content, turn);
    const text = textOf(content);
    const uses = content.filter((b): b is ToolUseBlock => b.type === "tool_use");

    if (uses.length === 0) {
      opts.onProgress?.(turn, maxTurns, `turn ${turn}/${maxTurns}: replied without tools`);
      if (resp.stop_reason === "max_tokens") {
        return finish({
          final: text,
          stop: "max_tokens",
          incomplete: true,
          error: `the reply was cut at max_tokens=${maxTokens}; pass a larger max_tokens or ask for smaller steps`,
        });
      }
      if (turn < maxTurns && c.nudges < s.maxNudges && announcesWork(text)) {
        c.nudges++;
        lastWasNudge = true;
        beforeNudge = text;
        // The countdown rides on whatever message comes next, so a nudge cannot hide it.
        const note = countdownNote(maxTurns - turn);
        history.push({ role: "assistant", content }, { role: "user", content: note ? NUDGE_TEXT + note : NUDGE_TEXT });
        continue;
      }
      // Replying on the last turn after working up to it means the budget ran out (the
      // countdown told it to stop); the report is usable, but the caller should know.
      const hitLimit = turn === maxTurns && maxTurns > 1 && !lastWasNudge;
      const stillAnnouncing = c.nudges > 0 && !c.resumed && announcesWork(text);
      let error: string | undefined;
      if (!text) error = "the agent ended with an empty reply; re-run it, or try another model";
      else if (stillAnnouncing) {
        error = `the agent kept announcing work without calling tools after ${c.nudges} nudge(s); re-run with a more specific task or another model`;
      }
      // A sign-off like "I'll leave the docs to you" can draw a nudge; if the agent then
      // only confirms it is done, the report it had already written must not be lost.
      const final =
        lastWasNudge && beforeNudge && !text.includes(beforeNudge) ? `${beforeNudge}\n\n${text}`.trim() : text;
      return finish({
        final,
        stop: resp.stop_reason || "end_turn",
        hitLimit,
        incomplete: !text || stillAnnouncing,
        ...(error ? { error } : {}),
      });
    }

    if (lastWasNudge) c.resumed = true;
    lastWasNudge = false;
    history.push({ role: "assistant", content });
    if (turn === maxTurns) {
      return finish({
        final: text,
        stop: "max_turns",
        hitLimit: true,
        incomplete: true,
        error: `the agent used all ${maxTurns} turns and still wanted to call tools; check what it changed, then re-run the rest as a new task or raise max_turns (hard cap 40)`,
      });
    }

    const results: ToolResultBlock[] = [];
    const names: string[] = [];
    for (const use of uses) {
      const out = await runTool(tools, use, ctx);
      if (out.bash) {
        c.bashCalls++;
        c.lastBashExit = out.bash.exitCode;
        if (out.bash.exitCode !== 0) c.bashFailures++;
      }
      const block: ToolResultBlock = { type: "tool_result", tool_use_id: use.id, content: out.content };
      if (out.is_error) block.is_error = true;
      results.push(block);
      names.push(out.bash ? `${use.name} (exit ${out.bash.exitCode})` : use.name);
      if (signal.aborted) break;
    }
    if (signal.aborted) return stopped();
    const note = countdownNote(maxTurns - turn);
    const last = results[results.length - 1];
    if (note && last) last.content += note;
    history.push({ role: "user", content: results });
    for (let i = 0; i < results.length; i++) pruner.add(results[i]!, uses[i]?.name ?? "tool");
    pruner.settle();
    opts.onProgress?.(turn, maxTurns, `turn ${turn}/${maxTurns}: ${names.join(", ")}`);
  }
  // Unreachable: the last turn returns above. Kept so the type checker sees a result.
  return finish({ final: "", stop: "max_turns", hitLimit: true, incomplete: true, error: "turn budget exhausted" });
}

/**
 * What the model sent, made safe to send back: empty text blocks are dropped (the
 * Anthropic API rejects them) and a tool call without an id gets one, so its result can
 * be matched.
 */
function tidyContent(content: ContentBlock[], turn: number): ContentBlock[] {
  const out: ContentBlock[] = [];
  let n = 0;
  for (const b of content) {
    if (b.type === "text" && b.text.trim() === "") continue;
    if (b.type === "tool_use" && !b.id) out.push({ ...b, id: `toolu_dl_${turn}_${n++}` });
    else out.push(b);
  }
  return out;
}

function textOf(content: ContentBlock[]): string {
  return content
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n")
    .trim();
}

async function runTool(tools: Map<string, AgentTool>, use: ToolUseBlock, ctx: ToolContext): Promise<ToolOutcome> {
  const tool = tools.get(use.name);
  if (!tool) {
    return {
      content: `unknown tool ${JSON.stringify(use.name)}; available: ${[...tools.keys()].join(", ")}`,
      is_error: true,
    };
  }
  const broken = toolInputError(use);
  if (broken) return { content: broken, is_error: true };
  const input = use.input && typeof use.input === "object" && !Array.isArray(use.input) ? use.input : {};
  try {
    return await tool.run(input, ctx);
  } catch (e) {
    return { content: `${use.name} failed: ${describeError(e)}`, is_error: true };
  }
}
