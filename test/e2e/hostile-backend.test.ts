import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectWithHelperAgent, type DlSession, tempDir } from "../helpers/dl.ts";

/**
 * Issue 10 items 9, 10 and 14 (gzip): backends that send hostile indices, nonsense usage
 * figures or a corrupt compressed body, through dist/dl serve.
 */
type Result = {
  success: boolean;
  final_response: string;
  error?: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number };
};

let fake: FakeModel;
let session: DlSession;

beforeAll(async () => {
  fake = await startFakeModel();
  session = await connectWithHelperAgent(fake.url, {
    DELEGATE_LOCAL_MODEL: "local-test-model",
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});
beforeEach(() => fake.reset());

async function delegate(model: string, timeout = 20_000): Promise<{ r: Result; isError: boolean; text: string }> {
  const res = await session.client.callTool(
    { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "t", workdir: tempDir("w"), model } },
    { timeout },
  );
  const text = (res.content as { text: string }[])[0]?.text ?? "";
  return { r: res.structuredContent as Result, isError: res.isError === true, text };
}

const sse = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const HUGE = 4294967294;

function anthropicHugeIndex(): string[] {
  return [
    sse("message_start", { message: { model: "m", usage: { input_tokens: 1 } } }),
    sse("content_block_start", { index: HUGE, content_block: { type: "text", text: "" } }),
    sse("content_block_delta", { index: HUGE, delta: { type: "text_delta", text: "hi" } }),
    sse("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }),
    sse("message_stop", {}),
  ];
}

function openaiHugeIndex(): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return [
    chunk({ tool_calls: [{ index: HUGE, id: "c1", function: { name: "read_file", arguments: "{}" } }] }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
}

describe("hostile backends through dist/dl serve", () => {
  for (const [format, model, events] of [
    ["anthropic", "glm-huge-index", anthropicHugeIndex()],
    ["openai", "deepseek-huge-index", openaiHugeIndex()],
  ] as const) {
    test(`${format}: a streamed index of ${HUGE} is refused at once, and the server keeps answering`, async () => {
      fake.script(model, { rawSse: events });
      const started = performance.now();
      const { r } = await delegate(model);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(r.success).toBe(false);
      expect(r.error).toContain(`index ${HUGE} is not an integer in 0..1023`);
      expect(r.error).not.toContain("could not reach");
      fake.script(model, reply.text("fine"));
      expect((await delegate(model)).r.final_response).toBe("fine");
    });
  }

  test("fractional, huge and negative usage figures are coerced; the answer is kept", async () => {
    fake.script("glm-usage", reply.text("the answer", { usage: { input: 10.5, output: 1e19, cacheRead: -4 } }));
    const { r, isError } = await delegate("glm-usage");
    expect(isError).toBe(false);
    expect(r.final_response).toBe("the answer");
    expect(r.usage).toEqual({
      input_tokens: 10,
      output_tokens: Number.MAX_SAFE_INTEGER,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    });
  });

  test("delegate_batch: one task's bad usage never costs the other tasks their answers", async () => {
    fake.script("deepseek-bad-usage", reply.text("bad-usage answer", { usage: { input: 1e19, output: 2.5 } }));
    fake.script("glm-good", reply.text("good answer"));
    const res = await session.client.callTool({
      name: "delegate_batch",
      arguments: {
        tasks: [
          { agent_name: "helper", task: "a", workdir: tempDir("w"), model: "deepseek-bad-usage" },
          { agent_name: "helper", task: "b", workdir: tempDir("w"), model: "glm-good" },
        ],
      },
    });
    expect(res.isError).toBeFalsy();
    const results = (res.structuredContent as { results: Result[] }).results;
    expect(results.map((x) => x.final_response)).toEqual(["bad-usage answer", "good answer"]);
    expect(Number.isSafeInteger(results[0]!.usage.input_tokens)).toBe(true);
    expect(results[0]!.usage.output_tokens).toBe(2);
  });

  test("a corrupt gzip reply says it could not be decompressed, not that the backend is unreachable", async () => {
    const corrupt = new Uint8Array([31, 139, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const ctype of ["application/json", "text/event-stream"]) {
      fake.script("glm-gzip", { rawBody: corrupt, headers: { "content-encoding": "gzip", "content-type": ctype } });
      const { r } = await delegate("glm-gzip");
      expect(r.success).toBe(false);
      expect(r.error).toContain("could not be decompressed");
      expect(r.error).not.toContain("could not reach");
    }
  });
});
