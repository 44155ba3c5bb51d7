import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeModel, type FakeReply, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectWithHelperAgent, type DlSession, tempDir } from "../helpers/dl.ts";
import { pingWhile } from "../helpers/pinging.ts";

/**
 * Hostile backends through dist/dl serve, with a pool of ONE slot for the model: for each
 * fault the delegation recovers or fails with a clear message before the deadline, the
 * server answers ping quickly the whole time, and the slot is free afterwards (the next
 * delegation on the same model starts at once and succeeds).
 */
let fake: FakeModel;
let s: DlSession;
const MODEL = "local-test-model";

beforeAll(async () => {
  fake = await startFakeModel();
  s = await connectWithHelperAgent(fake.url, {
    DELEGATE_LOCAL_MODEL: MODEL,
    DELEGATE_HTTP_TIMEOUT: "2",
    DELEGATE_CONCURRENCY_DEFAULT: "1",
    DELEGATE_CONCURRENCY_LOCAL: "1",
  });
});
afterAll(async () => {
  await s?.close();
  await fake?.stop();
});

type Result = { success: boolean; final_response: string; error?: string };

async function delegate(): Promise<{ r: Result; ms: number }> {
  const t0 = performance.now();
  const res = await s.client.callTool(
    {
      name: "delegate_to_local_agent",
      arguments: { agent_name: "helper", task: "t", workdir: tempDir("w"), model: MODEL },
    },
    { timeout: 60_000 },
  );
  return { r: res.structuredContent as Result, ms: performance.now() - t0 };
}

/** Pings the server until `p` settles; resolves to p's value and the slowest ping. */
const pingingWhile = <T>(p: Promise<T>) => pingWhile(s.client, p);

const FAULTS: [string, FakeReply[], "recovers" | "fails", RegExp?][] = [
  ["429 with Retry-After, then an answer", [reply.rateLimit("1"), reply.text("fine")], "recovers"],
  ["429 without Retry-After, then an answer", [reply.rateLimit(), reply.text("fine")], "recovers"],
  ["a 503 every time", [reply.status(503)], "fails", /503|backend/],
  ["a stream cut mid-event, then an answer", [reply.cut(2), reply.text("fine")], "recovers"],
  ["a reply that never ends", [reply.hang()], "fails", /deadline|time|budget|2 s/i],
  ["an empty 200", [{ status: 200, body: "" }], "fails", /unusable|ended early|empty|reply/i],
  [
    "an HTML page with 200",
    [{ status: 200, body: "<html>login</html>", headers: { "content-type": "text/html" } }],
    "fails",
    /unusable|ended early|reply/i,
  ],
];

describe("hostile backends through dl serve: ping answered, pool slot freed", () => {
  for (const [name, steps, expected, why] of FAULTS) {
    test(`${name}: ${expected}, before the deadline`, async () => {
      fake.reset();
      if (expected === "fails") fake.always(steps[0]!, MODEL);
      else fake.script(MODEL, ...steps);
      const { value, slowestPing, pings } = await pingingWhile(delegate());
      expect(pings).toBeGreaterThan(0);
      expect(slowestPing).toBeLessThan(1_000);
      expect(value.ms).toBeLessThan(20_000);
      if (expected === "recovers") {
        expect(value.r.success).toBe(true);
        expect(value.r.final_response).toBe("fine");
      } else {
        expect(value.r.success).toBe(false);
        expect(value.r.error ?? "").toMatch(why!);
      }
      // The one slot is free again: the next delegation starts and finishes at once.
      fake.reset();
      fake.script(MODEL, reply.text("after"));
      const next = await delegate();
      expect(next.r.final_response).toBe("after");
      expect(next.ms).toBeLessThan(5_000);
    }, 60_000);
  }
});
