import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { complete } from "../../src/backends/client.ts";
import { toolInputError } from "../../src/backends/tool-input.ts";
import type { Message, ToolUseBlock } from "../../src/backends/types.ts";
import { isDlError } from "../../src/errors.ts";
import { reply, startFakeModel } from "../fixture/fake-model.ts";
import { fakeClock, KEY, request } from "./util.ts";

const fake = await startFakeModel();
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const MODELS = { anthropic: "local-qwen-3-6", openai: "deepseek-v4-flash" } as const;
/** The parts of a request body as sent that these tests read. */
type SentBlock = { type: string; cache_control?: unknown } & Record<string, unknown>;
type AnthropicBody = {
  system: unknown;
  tools: SentBlock[];
  messages: { role: string; content: SentBlock[] }[];
};
type OpenaiBody = {
  tools: unknown[];
  messages: ({ role: string } & Record<string, unknown>)[];
  stream_options?: unknown;
};

const BIG_INPUT = { command: `pytest -q tests/test_a.py && echo 'done' # ${"x".repeat(300)}`, cwd: "ünïcode/✓" };

for (const format of ["anthropic", "openai"] as const) {
  for (const stream of [true, false]) {
    describe(`${format} ${stream ? "streaming" : "JSON"}`, () => {
      const model = MODELS[format];

      test("text reply: blocks, stop reason, usage, model, headers sent", async () => {
        fake.script(
          reply.text("Hello there, all done.", { usage: { input: 120, output: 7, cacheRead: 80, cacheWrite: 5 } }),
        );
        const res = await complete(request(fake.url, model, { stream }));
        expect(res.content).toEqual([{ type: "text", text: "Hello there, all done." }]);
        expect(res.stop_reason).toBe("end_turn");
        expect(res.model).toBe(model);
        expect(res.retries).toBe(0);
        expect(res.usage.input_tokens).toBe(120);
        expect(res.usage.output_tokens).toBe(7);
        expect(res.usage.cache_read_tokens).toBe(80);
        // OpenAI has no cache-write counter.
        expect(res.usage.cache_write_tokens).toBe(format === "anthropic" ? 5 : 0);
        const sent = fake.requests[0]!;
        expect(sent.path).toBe(format === "anthropic" ? "/v1/messages" : "/v1/chat/completions");
        expect(sent.headers["x-api-key"]).toBe(KEY);
        expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
        expect(sent.stream).toBe(stream);
        expect(sent.body.max_tokens).toBe(1000);
      });

      test("tool calls with arguments split into 1-character deltas", async () => {
        fake.script({
          text: "Let me check.",
          tools: [
            { name: "run_bash", input: BIG_INPUT },
            { name: "read_file", input: { path: "a.txt" } },
          ],
          chunkSize: 1,
        });
        const res = await complete(request(fake.url, model, { stream }));
        expect(res.stop_reason).toBe("tool_use");
        const uses = res.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
        expect(uses.map((u) => u.name)).toEqual(["run_bash", "read_file"]);
        expect(uses[0]!.input).toEqual(BIG_INPUT);
        expect(uses[1]!.input).toEqual({ path: "a.txt" });
        expect(uses[0]!.id).not.toBe(uses[1]!.id);
        expect(res.content[0]).toEqual({ type: "text", text: "Let me check." });
      });

      test("invalid tool-call JSON becomes an explained input, not a crash", async () => {
        fake.script({ tools: [{ name: "run_bash", rawArguments: '{"command": "ls' }] });
        const res = await complete(request(fake.url, model, { stream }));
        const use = res.content.find((b): b is ToolUseBlock => b.type === "tool_use")!;
        expect(use.name).toBe("run_bash");
        expect(toolInputError(use)).toMatch(/run_bash were not valid JSON/);
      });

      test("max_tokens stop reason and answering model captured", async () => {
        fake.script(reply.text("partial", { stop: "max_tokens", model: "deepseek-flash-fallback" }));
        const res = await complete(request(fake.url, model, { stream }));
        expect(res.stop_reason).toBe("max_tokens");
        expect(res.model).toBe("deepseek-flash-fallback");
      });

      test("x-bifrost-routing-info-* headers land in routing", async () => {
        fake.script(
          reply.text("ok", {
            headers: {
              "x-bifrost-routing-info-provider": "deepseek",
              "x-bifrost-routing-info-model": "v4",
              "x-other": "no",
            },
          }),
        );
        const res = await complete(request(fake.url, model, { stream }));
        expect(res.routing).toEqual({
          "x-bifrost-routing-info-provider": "deepseek",
          "x-bifrost-routing-info-model": "v4",
        });
      });

      test("thinking comes back as a thinking block", async () => {
        fake.script(reply.thinking("step one, step two", reply.text("answer")));
        const res = await complete(request(fake.url, model, { stream }));
        expect(res.content).toEqual([
          { type: "thinking", thinking: "step one, step two" },
          { type: "text", text: "answer" },
        ]);
      });
    });
  }
}

describe("reasoning round trip (deepseek, OpenAI format)", () => {
  async function twoTurns(resendReasoning: boolean) {
    fake.script(reply.thinking("I should list files", reply.tool("run_bash", { command: "ls" })), reply.text("done"));
    const model = "deepseek-v4-flash";
    const first = await complete(request(fake.url, model));
    const use = first.content.find((b): b is ToolUseBlock => b.type === "tool_use")!;
    const messages: Message[] = [
      { role: "user", content: "list files" },
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "a.txt\nb.txt" }] },
    ];
    return complete(request(fake.url, model, { messages, resendReasoning }), { clock: fakeClock().clock });
  }

  test("resent: the next turn succeeds and carries reasoning_content and tool messages", async () => {
    const res = await twoTurns(true);
    expect(res.content).toEqual([{ type: "text", text: "done" }]);
    const msgs = fake.requests[1]!.body.messages as Record<string, unknown>[];
    expect(msgs.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(msgs[2]!.reasoning_content).toBe("I should list files");
    expect((msgs[2]!.tool_calls as { function: { arguments: string } }[])[0]!.function.arguments).toBe(
      '{"command":"ls"}',
    );
    expect(msgs[3]!.content).toBe("a.txt\nb.txt");
  });

  test("dropped: the backend answers 400, which is not retried", async () => {
    const err = await twoTurns(false).catch((e) => e);
    expect(isDlError(err, "backend")).toBe(true);
    expect(err.data.status).toBe(400);
    expect(err.message).toContain("reasoning_content");
    expect(fake.requests.length).toBe(2);
  });
});

describe("Anthropic request shape", () => {
  const history: Message[] = [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "plan" },
        { type: "tool_use", id: "t1", name: "read_file", input: { path: "x" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "contents" }] },
  ];

  test("cache_control on system, last tool and the final message when promptCaching", async () => {
    fake.script(reply.text("ok"));
    await complete(request(fake.url, "glm-5", { messages: history, promptCaching: true }));
    const body = fake.requests[0]!.body as AnthropicBody;
    expect(body.system).toEqual([
      { type: "text", text: "You are a test agent.", cache_control: { type: "ephemeral" } },
    ]);
    expect(body.tools[0]?.cache_control).toBeUndefined();
    expect(body.tools[1]?.cache_control).toEqual({ type: "ephemeral" });
    expect(body.messages[2]?.content[0]?.cache_control).toEqual({ type: "ephemeral" });
    // Unsigned thinking is not resent by default.
    expect(body.messages[1]?.content.map((b) => b.type)).toEqual(["tool_use"]);
  });

  test("no cache_control without promptCaching; thinking resent when asked", async () => {
    fake.script(reply.text("ok"));
    await complete(request(fake.url, "glm-5", { messages: history, resendReasoning: true }));
    const raw = JSON.stringify(fake.requests[0]!.body);
    expect(raw).not.toContain("cache_control");
    expect((fake.requests[0]!.body as AnthropicBody).messages[1]!.content[0]).toEqual({
      type: "thinking",
      thinking: "plan",
    });
  });
});

test("OpenAI conversion: tools as functions, tool results before user text", async () => {
  fake.script(reply.text("ok"));
  const messages: Message[] = [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "reading" },
        { type: "tool_use", id: "c1", name: "read_file", input: { path: "x" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "c1", content: "data" },
        { type: "text", text: "3 turns left" },
      ],
    },
  ];
  await complete(request(fake.url, "gpt-5", { messages, stream: false }));
  const body = fake.requests[0]!.body as OpenaiBody;
  expect(body.tools[0]).toEqual({
    type: "function",
    function: { name: "read_file", description: "Read a file", parameters: expect.any(Object) },
  });
  expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
  expect(body.messages[2]?.content).toBe("reading");
  expect(body.messages[3]).toEqual({ role: "tool", tool_call_id: "c1", content: "data" });
  expect(body.stream_options).toBeUndefined();
});
