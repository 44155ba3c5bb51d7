import { describe, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import type { Agent } from "../../src/agent/lookup.ts";
import { agentResult, type RunCounters, resolveBudget, stoppedEnd } from "../../src/agent/loop.ts";
import { type BashCounters, runToolCalls } from "../../src/agent/tool-calls.ts";
import type { AgentTool } from "../../src/agent/tools/types.ts";
import { emptyUsage } from "../../src/backends/types.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { tempDir } from "../helpers/dl.ts";

/** The loop's phases on their own: budget, result, stop, tool calls. */
const agent: Agent = { name: "helper", file: "/x/helper.md", source: "global", meta: { raw: {} }, body: "Help." };

describe("resolveBudget", () => {
  test("a local-lane model gets the local turn budget; a cloud model the cloud one", () => {
    const settings = defaultAgentSettings({ defaultMaxTurns: 12, defaultMaxTurnsLocal: 30 });
    expect(resolveBudget({ agent, settings, model: "local-qwen" }).maxTurns).toBe(30);
    expect(resolveBudget({ agent, settings, model: "ornith-7b" }).maxTurns).toBe(30);
    expect(resolveBudget({ agent, settings, model: "deepseek-v4-flash" }).maxTurns).toBe(12);
    expect(resolveBudget({ agent, settings, model: "deepseek-v4-flash", max_turns: 5 }).maxTurns).toBe(5);
  });

  test("without an explicit model the agent runs on the default model", () => {
    const b = resolveBudget({ agent, settings: defaultAgentSettings({ defaultModel: "local-x" }) });
    expect(b.model).toBe("local-x");
    expect(b.maxTokens).toBeGreaterThan(0);
  });
});

describe("stoppedEnd and agentResult", () => {
  test("a caller's cancel and the deadline end differently, both incomplete", () => {
    expect(stoppedEnd(true, 60_000)).toMatchObject({ stop: "cancelled", incomplete: true });
    const late = stoppedEnd(false, 90_000);
    expect(late).toMatchObject({ stop: "timeout", incomplete: true });
    expect(late.error).toContain("90 s deadline");
  });

  test("the result carries the counters and is a success only without error or incompleteness", () => {
    const counters: RunCounters = {
      turns: 3,
      nudges: 1,
      resumed: true,
      lastWasNudge: false,
      beforeNudge: "",
      bashCalls: 2,
      bashFailures: 1,
      lastBashExit: 0,
      usage: emptyUsage(),
      modelUsed: "",
      tampered: [],
    };
    const run = { source: "global" as const, model: "m1", counters, started: performance.now() };
    const ok = agentResult({ final: "done", stop: "end_turn" }, run);
    expect(ok).toMatchObject({
      success: true,
      model_used: "m1",
      turns: 3,
      bash_failures: 1,
      resumed_after_nudge: true,
    });
    expect(ok.error).toBeUndefined();
    const cut = agentResult({ final: "", stop: "max_tokens", incomplete: true }, run);
    expect(cut.success).toBe(false);
    // A run_bash jail verdict fails the run, whatever the model answered, and says where it went.
    counters.tampered.push("the job wrote … (a/.git (new)); moved out of the workdir to /q/1.");
    const tampered = agentResult({ final: "done", stop: "end_turn" }, run);
    expect(tampered).toMatchObject({ success: false, failure_kind: "jail_git_tampered" });
    expect(tampered.error).toContain("a/.git (new)");
    expect(tampered.error).toContain("/q/1");
  });
});

describe("runToolCalls", () => {
  const fakeBash = (exits: number[]): AgentTool => ({
    spec: { name: "run_bash", description: "", input_schema: { type: "object", properties: {} } },
    run: async () => {
      const exitCode = exits.shift() ?? 0;
      return { content: `exit ${exitCode}`, is_error: exitCode !== 0, bash: { exitCode, timedOut: false } };
    },
  });

  test("counts bash exits, answers an unknown tool with an error and keeps call order", async () => {
    const tools = new Map([["run_bash", fakeBash([0, 2])]]);
    const ctx = { workdir: realpathSync(tempDir("phases")), allowEscape: false, signal: new AbortController().signal };
    const bash: BashCounters = { bashCalls: 0, bashFailures: 0, lastBashExit: null };
    const { results, names } = await runToolCalls(
      tools,
      [
        { type: "tool_use", id: "a", name: "run_bash", input: {} },
        { type: "tool_use", id: "b", name: "nope", input: {} },
        { type: "tool_use", id: "c", name: "run_bash", input: {} },
      ],
      ctx,
      bash,
    );
    expect(bash).toEqual({ bashCalls: 2, bashFailures: 1, lastBashExit: 2 });
    expect(results.map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([
      ["a", false],
      ["b", true],
      ["c", true],
    ]);
    expect(results[1]?.content).toContain('unknown tool "nope"');
    expect(names.map((n) => n.replace(/^run_bash .* \(exit/, "run_bash (exit"))).toEqual([
      "run_bash (exit 0)",
      "nope (failed)",
      "run_bash (exit 2)",
    ]);
  });

  test("a run_bash refused before its command ran (no jail could start) counts as a call that failed", async () => {
    const refused: AgentTool = {
      spec: { name: "run_bash", description: "", input_schema: { type: "object", properties: {} } },
      run: async () => ({ content: "the jail cannot start, so nothing runs", is_error: true }),
    };
    const ctx = { workdir: "/", allowEscape: false, signal: new AbortController().signal };
    const bash: BashCounters = { bashCalls: 0, bashFailures: 0, lastBashExit: null };
    const use = { type: "tool_use" as const, id: "a", name: "run_bash", input: {} };
    await runToolCalls(new Map([["run_bash", refused]]), [use], ctx, bash);
    expect(bash).toEqual({ bashCalls: 1, bashFailures: 1, lastBashExit: null });
  });

  test("an abort during a call leaves the later calls unstarted", async () => {
    const abort = new AbortController();
    const stopper: AgentTool = {
      spec: { name: "stop", description: "", input_schema: { type: "object", properties: {} } },
      run: async () => {
        abort.abort();
        return { content: "stopped", is_error: false };
      },
    };
    const ctx = { workdir: "/", allowEscape: false, signal: abort.signal };
    const bash: BashCounters = { bashCalls: 0, bashFailures: 0, lastBashExit: null };
    const uses = ["x", "y"].map((id) => ({ type: "tool_use" as const, id, name: "stop", input: {} }));
    const { results } = await runToolCalls(new Map([["stop", stopper]]), uses, ctx, bash);
    expect(results.map((r) => r.tool_use_id)).toEqual(["x"]);
  });
});
