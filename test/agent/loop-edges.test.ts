import { describe, expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import type { Agent } from "../../src/agent/lookup.ts";
import { type RunAgentOptions, runAgent } from "../../src/agent/loop.ts";
import { INVALID_TOOL_INPUT } from "../../src/backends/tool-input.ts";
import type { ContentBlock, Message, ModelRequest, ModelResponse } from "../../src/backends/types.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { tempDir } from "../helpers/dl.ts";

/** Replies a model can really send that the loop must handle without losing anything. */
const agent: Agent = { name: "helper", file: "/x/helper.md", source: "global", meta: { raw: {} }, body: "Help." };
const endpoint = { url: "http://127.0.0.1:1/v1/messages", format: "anthropic" as const, apiKey: "k" };
const text = (t: string): ContentBlock => ({ type: "text", text: t });
let n = 0;
const tool = (name: string, input: Record<string, unknown>, id = `t${++n}`): ContentBlock => ({
  type: "tool_use",
  id,
  name,
  input,
});

function run(steps: ContentBlock[][], o: Partial<RunAgentOptions> = {}) {
  const requests: Message[][] = [];
  const complete = async (req: ModelRequest): Promise<ModelResponse> => {
    requests.push(structuredClone(req.messages));
    const content = steps[requests.length - 1] ?? [text("(script ended)")];
    const uses = content.some((b) => b.type === "tool_use");
    return {
      content,
      stop_reason: uses ? "tool_use" : "end_turn",
      usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 },
      model: "m",
      routing: {},
      retries: 0,
    };
  };
  const opts: RunAgentOptions = {
    agent,
    task: "task",
    workdir: realpathSync(tempDir("edges")),
    complete,
    endpoint,
    settings: defaultAgentSettings({ defaultModel: "cloud-x", baseEnv: { PATH: process.env.PATH } }),
    ...o,
  };
  return { result: runAgent(opts), requests };
}

const userText = (m: Message | undefined): string =>
  m && typeof m.content === "string" ? m.content : JSON.stringify(m?.content ?? "");

describe("agent loop edge cases", () => {
  test("a report that ends with a sign-off survives the nudge it draws", async () => {
    const { result } = run([
      [text("Fixed the bug in parse.ts and the tests pass. I'll leave the docs to you.")],
      [text("Done.")],
    ]);
    const r = await result;
    expect(r.nudges).toBe(1);
    expect(r.success).toBe(true);
    expect(r.final_response).toContain("Fixed the bug in parse.ts");
    expect(r.final_response).toContain("Done.");
  });

  test("the last-turn warning reaches the model even when that turn's message is a nudge", async () => {
    const { result, requests } = run(
      [
        [tool("run_bash", { command: "true" })],
        [tool("run_bash", { command: "true" })],
        [text("I'll run the tests now.")],
        [text("Report: done.")],
      ],
      { max_turns: 4 },
    );
    const r = await result;
    expect(r.nudges).toBe(1);
    const beforeLast = requests[3]!;
    expect(userText(beforeLast[beforeLast.length - 1])).toContain("no more tools will run");
  });

  test("broken tool-call JSON is answered with the explanation, not a misleading tool error", async () => {
    const broken: ContentBlock = {
      type: "tool_use",
      id: "tb",
      name: "read_file",
      input: {
        [INVALID_TOOL_INPUT]: "arguments for tool read_file were not valid JSON (12 chars); send the call again",
      },
    };
    const { result, requests } = run([[broken], [text("ok")]]);
    await result;
    const toolResult = JSON.stringify(requests[1]!.at(-1));
    expect(toolResult).toContain("were not valid JSON");
    expect(toolResult).not.toContain("path is empty");
  });

  test("empty text blocks are never sent back, and a tool call without an id gets one", async () => {
    const { result, requests } = run([[text(""), tool("run_bash", { command: "true" }, "")], [text("done")]]);
    const r = await result;
    expect(r.success).toBe(true);
    const assistant = requests[1]![1]!;
    const blocks = assistant.content as ContentBlock[];
    expect(blocks.some((b) => b.type === "text" && b.text === "")).toBe(false);
    const use = blocks.find((b) => b.type === "tool_use") as { id: string };
    expect(use.id).not.toBe("");
    const results = requests[1]![2]!.content as { tool_use_id: string }[];
    expect(results[0]!.tool_use_id).toBe(use.id);
  });

  test("an empty reply is still reported as a failure", async () => {
    const r = await run([[text("")]]).result;
    expect(r.success).toBe(false);
    expect(r.error).toContain("empty reply");
  });

  test("ornith models use the local turn budget", async () => {
    const steps = Array.from({ length: 12 }, () => [tool("run_bash", { command: "true" })]);
    const r = await run(steps, {
      model: "ornith-7b",
      settings: defaultAgentSettings({
        defaultModel: "x",
        defaultMaxTurns: 25,
        defaultMaxTurnsLocal: 5,
        baseEnv: { PATH: process.env.PATH },
      }),
    }).result;
    expect(r.turns).toBe(5);
    expect(r.hit_turn_limit).toBe(true);
  });
});
