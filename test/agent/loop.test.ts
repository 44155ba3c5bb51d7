import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Agent } from "../../src/agent/lookup.ts";
import { type RunAgentOptions, runAgent } from "../../src/agent/loop.ts";
import { agentResultSchema } from "../../src/agent/result.ts";
import type { ContentBlock, Message, ModelRequest, ModelResponse } from "../../src/backends/types.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { DlError } from "../../src/errors.ts";
import { tempDir } from "../helpers/dl.ts";
import { liveWith } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

const agent = (name = "reviewer"): Agent => ({
  name,
  file: `/x/${name}.md`,
  source: "global",
  meta: { raw: {} },
  body: "Be brief.",
});
const endpoint = { url: "http://127.0.0.1:1/v1/messages", format: "anthropic" as const, apiKey: "k" };

type Step = ContentBlock[] | ((req: ModelRequest) => ModelResponse | Promise<ModelResponse>);
let ids = 0;
const tool = (name: string, input: Record<string, unknown>): ContentBlock => ({
  type: "tool_use",
  id: `t${++ids}`,
  name,
  input,
});
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const resp = (content: ContentBlock[], over: Partial<ModelResponse> = {}): ModelResponse => ({
  content,
  stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
  usage: { input_tokens: 100, output_tokens: 10, cache_read_tokens: 5, cache_write_tokens: 1 },
  model: "served-model",
  routing: {},
  retries: 0,
  ...over,
});

/** A `complete` that plays `steps` in order and keeps a deep copy of every request. */
function scripted(steps: Step[]) {
  const requests: Omit<ModelRequest, "signal">[] = [];
  const complete = async (req: ModelRequest): Promise<ModelResponse> => {
    const { signal: _s, ...rest } = req;
    requests.push(structuredClone(rest));
    const step = steps[requests.length - 1] ?? [text("(script ended)")];
    return typeof step === "function" ? step(req) : resp(step);
  };
  return { complete, requests };
}

function opts(complete: RunAgentOptions["complete"], o: Partial<RunAgentOptions> = {}): RunAgentOptions {
  return {
    agent: agent(),
    task: "do the thing",
    workdir: realpathSync(tempDir("loop")),
    complete,
    endpoint,
    settings: defaultAgentSettings({
      defaultModel: "local-default",
      codingModel: "local-coder",
      baseEnv: { PATH: process.env.PATH },
    }),
    ...o,
  };
}

const lastToolResult = (m: Message[]): string => {
  const last = m[m.length - 1];
  if (!last || typeof last.content === "string") return "";
  const b = last.content[last.content.length - 1];
  return b?.type === "tool_result" ? b.content : "";
};

describe("runAgent", () => {
  test("runs tools, measures bash, sums usage, returns a schema-valid result", async () => {
    const s = scripted([
      [text("writing"), tool("write_file", { path: "out/a.txt", content: "hi\n" })],
      [tool("read_file", { path: "out/a.txt" }), tool("run_bash", { command: "exit 4" })],
      [text("All done: wrote out/a.txt.")],
    ]);
    const o = opts(s.complete);
    const progress: string[] = [];
    const r = await runAgent({ ...o, onProgress: (t, m, msg) => progress.push(`${t}/${m} ${msg}`) });
    expect(agentResultSchema().parse(r)).toEqual(r);
    expect(r.success).toBe(true);
    expect(r.final_response).toBe("All done: wrote out/a.txt.");
    expect(r.turns).toBe(3);
    expect(r.bash_calls).toBe(1);
    expect(r.bash_failures).toBe(1);
    expect(r.last_bash_exit).toBe(4);
    expect(r.usage).toEqual({ input_tokens: 300, output_tokens: 30, cache_read_tokens: 15, cache_write_tokens: 3 });
    expect(r.model).toBe("local-default");
    expect(r.model_used).toBe("served-model");
    expect(r.agent_source).toBe("global");
    expect(readFileSync(join(o.workdir, "out/a.txt"), "utf8")).toBe("hi\n");
    // The second request carries the write result; the third the read and the exit code.
    expect(lastToolResult(s.requests[1]!.messages)).toContain("wrote 3 bytes");
    const third = JSON.stringify(s.requests[2]!.messages);
    expect(third).toContain("[lines 1-1 of 1]");
    expect(third).toContain("exit code: 4");
    expect(s.requests[0]!.system).toContain(`Working directory (absolute): ${o.workdir}`);
    expect(s.requests[0]!.tools.map((t) => t.name)).toEqual([
      "read_file",
      "write_file",
      "edit_file",
      "search_files",
      "list_files",
      "run_bash",
    ]);
    expect(progress[1]).toBe("2/25 turn 2/25: read_file out/a.txt, run_bash exit 4 (exit 4)");
  });

  test("a tool-less 'I'll…' turn is nudged, and the resume is reported", async () => {
    const s = scripted([
      [text("I'll run the tests now.")],
      [tool("run_bash", { command: "true" })],
      [text("Tests pass (exit 0).")],
    ]);
    const r = await runAgent(opts(s.complete));
    expect(r.nudges).toBe(1);
    expect(r.resumed_after_nudge).toBe(true);
    expect(r.success).toBe(true);
    expect(r.last_bash_exit).toBe(0);
    const nudge = s.requests[1]!.messages[2]!;
    expect(nudge.role).toBe("user");
    expect(String(nudge.content)).toContain("did not call any tool");
  });

  test("nudges stop at the configured maximum and the result says the work was not done", async () => {
    const s = scripted([[text("Let me check.")], [text("Let me check again.")], [text("Let me look:")], [text("x")]]);
    const o = opts(s.complete);
    const r = await runAgent({ ...o, settings: { ...o.settings, maxNudges: 2 } });
    expect(s.requests).toHaveLength(3);
    expect(r.nudges).toBe(2);
    expect(r.resumed_after_nudge).toBe(false);
    expect(r.incomplete).toBe(true);
    expect(r.success).toBe(false);
    expect(r.error).toContain("announcing work");
  });

  test("countdown at 3 turns left says save in files, never commit; the last turn says no more tools; the limit is reported", async () => {
    const steps: Step[] = Array.from({ length: 6 }, () => [tool("run_bash", { command: "true" })]);
    const s = scripted(steps);
    const r = await runAgent(opts(s.complete, { max_turns: 6 }));
    expect(s.requests).toHaveLength(6);
    expect(lastToolResult(s.requests[2]!.messages)).not.toContain("[dl:");
    const countdown = lastToolResult(s.requests[3]!.messages);
    expect(countdown).toContain("save your work in the files (delegates do not commit");
    expect(countdown).not.toMatch(/git (add|commit)/);
    expect(lastToolResult(s.requests[5]!.messages)).toContain("no more tools will run");
    expect(r.hit_turn_limit).toBe(true);
    expect(r.incomplete).toBe(true);
    expect(r.success).toBe(false);
    expect(r.stop_reason).toBe("max_turns");
    expect(r.bash_calls).toBe(5); // the sixth turn's tool call is not run
    expect(r.error).toContain("max_turns");
  });

  test("over the context budget, old tool results are stubbed down to the newest K", async () => {
    const s = scripted([
      ...Array.from({ length: 5 }, (_, i): Step => [tool("run_bash", { command: `echo RESULT-${i}` })]),
      [text("done")],
    ]);
    const o = opts(s.complete);
    await runAgent({ ...o, settings: { ...o.settings, keepToolResults: 2, contextBudgetChars: 1 } });
    const final = JSON.stringify(s.requests[5]!.messages);
    expect(final).not.toContain("RESULT-0\\n");
    expect(final).not.toContain("RESULT-2\\n");
    expect(final).toContain("RESULT-3");
    expect(final).toContain("RESULT-4");
    expect(final.match(/earlier run_bash result removed/g)).toHaveLength(3);
  });

  test("max_tokens policy, coding-model routing, caching and reasoning flags reach the request", async () => {
    const run = async (o: Partial<RunAgentOptions>, settings = {}) => {
      const s = scripted([[text("ok")]]);
      const base = opts(s.complete, o);
      await runAgent({ ...base, settings: { ...base.settings, ...settings } });
      return s.requests[0]!;
    };
    const coder = await run({ agent: agent("backend-architect") });
    expect(coder.model).toBe("local-coder");
    expect(coder.max_tokens).toBe(65536);
    expect(coder.promptCaching).toBe(false);
    expect(coder.resendReasoning).toBe(false);
    const ds = await run({ model: "deepseek-v4-flash", agent: agent("coder") });
    expect(ds.model).toBe("deepseek-v4-flash");
    expect(ds.max_tokens).toBe(150000);
    expect(ds.resendReasoning).toBe(true);
    expect((await run({ model: "deepseek-v4-flash", max_tokens: 4096 })).max_tokens).toBe(4096);
    expect((await run({ model: "glm-5" })).promptCaching).toBe(true);
    expect((await run({ model: "glm-5" }, { promptCaching: false })).promptCaching).toBe(false);
    expect((await run({ model: "glm-5" }, { resendReasoning: "1" })).resendReasoning).toBe(true);
    expect((await run({ model: "deepseek-chat" }, { resendReasoning: "0" })).resendReasoning).toBe(false);
    expect((await run({ max_turns: 99 })).system).toContain("at most 40 turns");
    expect((await run({}, { defaultMaxTurns: 30, defaultMaxTurnsLocal: 12 })).system).toContain("at most 12 turns");
    expect((await run({ model: "glm-5" }, { defaultMaxTurns: 30, defaultMaxTurnsLocal: 12 })).system).toContain(
      "at most 30 turns",
    );
  });

  test("an endpoint function gets the chosen model", async () => {
    const s = scripted([[text("ok")]]);
    const seen: string[] = [];
    const routeFor = (m: string) => {
      seen.push(m);
      return endpoint;
    };
    await runAgent(opts(s.complete, { agent: agent("coder"), endpoint: routeFor }));
    expect(seen).toEqual(["local-coder"]);
  });

  test("abort mid-command kills it and returns a cancelled result", async () => {
    const ac = new AbortController();
    const o = opts(async () => resp([]), { signal: ac.signal });
    const marker = join(o.workdir, "started");
    const m = `loop-abort-${process.pid}-${Math.random()}`;
    const s = scripted([[tool("run_bash", { command: `: ${m}; echo $$ > ${marker}; sleep 30` })], [text("never")]]);
    const p = runAgent({ ...o, complete: s.complete });
    await until(() => existsSync(marker) && readFileSync(marker, "utf8").endsWith("\n"), "the command to start");
    ac.abort();
    const r = await p;
    expect(r.stop_reason).toBe("cancelled");
    expect(r.success).toBe(false);
    expect(r.error).toContain("cancelled");
    expect(s.requests).toHaveLength(1);
    // Found by its argv: as root the command sees its own pid namespace, not the host's.
    expect(Number(readFileSync(marker, "utf8"))).toBeGreaterThan(0);
    expect(liveWith(m)).toEqual([]);
  });

  test("the whole-delegation deadline stops a hung model call", async () => {
    const hang = (req: ModelRequest) =>
      new Promise<ModelResponse>((_, reject) =>
        req.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      );
    const o = opts(hang);
    const r = await runAgent({ ...o, settings: { ...o.settings, dispatchTimeoutMs: 100 } });
    expect(r.stop_reason).toBe("timeout");
    expect(r.success).toBe(false);
    expect(r.error).toContain("deadline");
  });

  test("a backend failure becomes an error result that says what to try", async () => {
    const r = await runAgent(
      opts(async () => {
        throw new DlError("backend", "HTTP 404 from 127.0.0.1:1: model not found");
      }),
    );
    expect(r.success).toBe(false);
    expect(r.stop_reason).toBe("error");
    expect(r.error).toContain("model not found");
    expect(r.error).toContain("local_backend_status");
  });

  test("a reply cut at max_tokens and a missing workdir are failures", async () => {
    const cut = await runAgent(opts(async () => resp([text("partial")], { stop_reason: "max_tokens" })));
    expect(cut.incomplete).toBe(true);
    expect(cut.error).toContain("max_tokens");
    const bad = await runAgent(opts(async () => resp([text("x")]), { workdir: "/nonexistent/dir" }));
    expect(bad.success).toBe(false);
    expect(bad.error).toContain("not an existing directory");
    expect(bad.turns).toBe(0);
  });

  test("unknown tools and path escapes come back to the model as errors, not crashes", async () => {
    const s = scripted([[tool("rm_rf", {}), tool("read_file", { path: "/etc/passwd" })], [text("ok")]]);
    const r = await runAgent(opts(s.complete));
    expect(r.success).toBe(true);
    const results = JSON.stringify(s.requests[1]!.messages[2]);
    expect(results).toContain("unknown tool");
    expect(results).toContain("outside the working directory");
    expect(results).not.toContain("root:");
  });
});
