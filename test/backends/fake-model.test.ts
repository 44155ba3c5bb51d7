/** The fixture other suites lean on: its queues, concurrency counters and failure modes. */
import { afterAll, beforeEach, expect, test } from "bun:test";
import { complete } from "../../src/backends/client.ts";
import { reply, startFakeModel } from "../fixture/fake-model.ts";
import { fakeClock, request } from "./util.ts";

const fake = await startFakeModel();
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

test("per-model queues win over the shared queue, then always, then a 400 naming the model", async () => {
  fake.script("glm-5", reply.text("for glm"));
  fake.script(reply.text("shared"));
  fake.always(reply.text("fallback"));
  const text = async (model: string) => {
    const r = await complete(request(fake.url, model, { stream: false }));
    return r.content[0]?.type === "text" ? r.content[0].text : "";
  };
  expect(await text("local-x")).toBe("shared");
  expect(await text("glm-5")).toBe("for glm");
  expect(await text("glm-5")).toBe("fallback");
  fake.reset();
  const e = await complete(request(fake.url, "nothing-here"), { clock: fakeClock().clock }).catch((e) => e);
  expect(e.data.status).toBe(400);
  expect(e.message).toContain("nothing scripted for model nothing-here");
});

test("function steps see the recorded request", async () => {
  fake.script((r) => reply.text(`you sent ${(r.body.messages as unknown[]).length} messages as ${r.format}`));
  const r = await complete(request(fake.url, "gpt-5"));
  expect(r.content).toEqual([{ type: "text", text: "you sent 2 messages as openai" }]);
});

test("peak counts concurrent requests per model and overall", async () => {
  fake.always(reply.text("slow", { delayMs: 150 }));
  const go = (model: string) => complete(request(fake.url, model));
  await Promise.all([go("m-a"), go("m-a"), go("m-a"), go("m-b")]);
  expect(fake.peak("m-a")).toBe(3);
  expect(fake.peak("m-b")).toBe(1);
  expect(fake.peak()).toBe(4);
  expect(fake.inFlight()).toBe(0);
});

test("delayMs really delays (a batch runs in parallel, not in series)", async () => {
  fake.always(reply.text("ok", { delayMs: 300 }));
  const t0 = performance.now();
  await Promise.all([1, 2, 3, 4].map(() => complete(request(fake.url, "glm-5"))));
  const ms = performance.now() - t0;
  expect(ms).toBeGreaterThanOrEqual(290);
  expect(ms).toBeLessThan(1000);
});

test("announce is a plain end_turn text with no tool call", async () => {
  fake.script(reply.announce());
  const r = await complete(request(fake.url, "local-qwen"));
  expect(r.stop_reason).toBe("end_turn");
  expect(r.content).toEqual([{ type: "text", text: "I'll run the tests now." }]);
});
