import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { complete } from "../../src/backends/client.ts";
import { sanitizeExcerpt } from "../../src/backends/http.ts";
import { DEFAULT_RETRY_POLICY, retryDelay } from "../../src/backends/retry.ts";
import { DlError, isDlError } from "../../src/errors.ts";
import { reply, startFakeModel } from "../fixture/fake-model.ts";
import { fakeClock, KEY, request } from "./util.ts";

const fake = await startFakeModel();
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const A = "local-qwen-3-6";
const O = "gpt-5";
const errors: string[] = [];
async function fails(p: Promise<unknown>): Promise<DlError> {
  const e = await p.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(DlError);
  errors.push((e as DlError).message, JSON.stringify((e as DlError).data));
  return e as DlError;
}

describe("retried", () => {
  test("429 with Retry-After waits that long, then succeeds", async () => {
    const { clock, sleeps } = fakeClock();
    fake.script(reply.rateLimit("7"), reply.text("ok"));
    const res = await complete(request(fake.url, A), { clock });
    expect(res.content).toEqual([{ type: "text", text: "ok" }]);
    expect(res.retries).toBe(1);
    expect(sleeps).toEqual([7000]);
  });

  test("Retry-After is capped", async () => {
    const { clock, sleeps } = fakeClock();
    fake.script(reply.rateLimit("3600"), reply.text("ok"));
    await complete(request(fake.url, O), { clock, retry: { retryAfterCapMs: 20_000 } });
    expect(sleeps).toEqual([20_000]);
  });

  test("429 without Retry-After and 5xx back off exponentially with jitter", async () => {
    const { clock, sleeps } = fakeClock();
    fake.script(reply.rateLimit(), reply.status(500), reply.status(502), reply.status(503), reply.text("ok"));
    const res = await complete(request(fake.url, O), { clock });
    expect(res.retries).toBe(4);
    // random() is 0.5 in the fake clock: the jitter factor is exactly 1.
    expect(sleeps).toEqual([1000, 2000, 4000, 8000]);
  });

  test("504 and 529 are retried; giving up says how often it tried", async () => {
    const { clock, sleeps } = fakeClock();
    fake.script(reply.status(504), reply.status(529), reply.status(529));
    const e = await fails(complete(request(fake.url, A), { clock, retry: { maxRetries: 2 } }));
    expect(e.code).toBe("backend");
    expect(e.data.status).toBe(529);
    expect(e.message).toContain("Gave up after 2 retries");
    expect(e.message).toContain(`127.0.0.1:${new URL(fake.url).port}`);
    expect(sleeps.length).toBe(2);
    expect(fake.requests.length).toBe(3);
  });

  for (const reset of [false, true]) {
    for (const model of [A, O]) {
      test(`stream ${reset ? "reset" : "closed"} before its final event is retried (${model})`, async () => {
        const { clock } = fakeClock();
        fake.script(reply.cut(3, reset), reply.text("complete"));
        const res = await complete(request(fake.url, model), { clock });
        expect(res.content).toEqual([{ type: "text", text: "complete" }]);
        expect(res.retries).toBe(1);
      });
    }
  }

  test("an overloaded_error event mid-stream is retried; an invalid_request_error event is not", async () => {
    const { clock, sleeps } = fakeClock();
    const errorEvent = (type: string) => [
      `event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}\n\n`,
      `event: error\ndata: {"type":"error","error":{"type":"${type}","message":"${type} happened"}}\n\n`,
    ];
    fake.script({ rawSse: errorEvent("overloaded_error") }, reply.text("ok"));
    expect((await complete(request(fake.url, A), { clock })).retries).toBe(1);
    fake.script({ rawSse: errorEvent("invalid_request_error") }, reply.text("never"));
    const e = await fails(complete(request(fake.url, A), { clock }));
    expect(e.message).toContain("invalid_request_error happened");
    expect(sleeps.length).toBe(1);
  });

  test("a non-JSON SSE event is a clear protocol error, not a crash", async () => {
    fake.script({ rawSse: ['data: {"choices": [oops\n\n'] });
    const e = await fails(complete(request(fake.url, O), { clock: fakeClock().clock }));
    expect(e.message).toContain("an SSE event is not JSON");
    expect(e.data.retryable).toBe(false);
  });

  test("onRetry reports each wait", async () => {
    const { clock } = fakeClock();
    const seen: number[] = [];
    fake.script(reply.status(503), reply.text("ok"));
    await complete(request(fake.url, A), { clock, onRetry: (i) => seen.push(i.attempt) });
    expect(seen).toEqual([1]);
  });
});

describe("not retried", () => {
  for (const status of [400, 401, 403, 404, 413, 422]) {
    test(`HTTP ${status}`, async () => {
      const { clock, sleeps } = fakeClock();
      fake.script(reply.status(status), reply.text("never reached"));
      const e = await fails(complete(request(fake.url, O), { clock }));
      expect(e.data.status).toBe(status);
      expect(e.data.retryable).toBe(false);
      expect(sleeps).toEqual([]);
      expect(fake.requests.length).toBe(1);
      expect(e.message).toMatch(/Next: /);
    });
  }

  test("401 from a key check says to check the key, without the key", async () => {
    const guarded = await startFakeModel({ apiKey: "the-right-key" });
    try {
      const e = await fails(complete(request(guarded.url, A), { clock: fakeClock().clock }));
      expect(e.data.status).toBe(401);
      expect(e.message).toContain("check the API key");
    } finally {
      await guarded.stop();
    }
  });

  test("connection refused is reported with the host and not retried", async () => {
    const { clock, sleeps } = fakeClock();
    const e = await fails(complete(request("http://127.0.0.1:1", A), { clock }));
    expect(e.message).toContain("could not reach");
    expect(e.message).toContain("127.0.0.1:1");
    expect(sleeps).toEqual([]);
  });
});

describe("abort and deadline", () => {
  test("abort while the backend hangs ends the request and frees it on the server", async () => {
    fake.script(reply.hang());
    const ac = new AbortController();
    const p = complete(request(fake.url, A, { signal: ac.signal }), { clock: fakeClock().clock });
    await fake.waitFor(() => fake.inFlight(A) === 1);
    ac.abort();
    const e = await fails(p);
    expect(e.code).toBe("cancelled");
    await fake.waitFor(() => fake.inFlight(A) === 0);
  });

  test("abort during a backoff wait stops at once", async () => {
    const ac = new AbortController();
    fake.script(reply.rateLimit("30"));
    const p = complete(request(fake.url, A, { signal: ac.signal }), {
      clock: {
        now: () => 0,
        random: () => 0.5,
        // A wait that only ends by abort: proves the signal reaches the sleep.
        sleep: (_ms, signal) =>
          new Promise((_r, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
      },
    });
    await fake.waitFor(() => fake.requests.length === 1);
    ac.abort();
    expect((await fails(p)).code).toBe("cancelled");
    expect(fake.requests.length).toBe(1);
  });

  test("a hanging backend hits the per-turn deadline", async () => {
    fake.script(reply.hang());
    const t0 = performance.now();
    const e = await fails(complete(request(fake.url, O), { turnTimeoutMs: 150 }));
    expect(e.code).toBe("timeout");
    expect(e.message).toContain("150 ms per turn");
    expect(performance.now() - t0).toBeLessThan(2000);
    await fake.waitFor(() => fake.inFlight(O) === 0);
  });

  test("no retry wait is started that would pass the deadline", async () => {
    const { clock, sleeps } = fakeClock();
    fake.script(reply.rateLimit("120"), reply.text("ok"));
    const e = await fails(complete(request(fake.url, A), { clock, turnTimeoutMs: 30_000 }));
    expect(e.message).toContain("would pass the turn deadline");
    expect(sleeps).toEqual([]);
  });
});

describe("secrets", () => {
  test("a body echoing the key is redacted", async () => {
    fake.script(reply.status(400, { body: `{"error":"bad key ${KEY} / Authorization: Bearer ${KEY}"}` }));
    const e = await fails(complete(request(fake.url, O), { clock: fakeClock().clock }));
    expect(e.message).toContain("<redacted>");
  });

  test("a key of no known shape, echoed by the backend, is cut too: the request made it a key dl holds", async () => {
    const plain = "plainvalue4711secret";
    const req = request(fake.url, O);
    fake.script(reply.status(401, { body: `{"error":"key ${plain} is not valid"}` }));
    const e = await fails(
      complete({ ...req, endpoint: { ...req.endpoint, apiKey: plain } }, { clock: fakeClock().clock }),
    );
    expect(e.message).toContain("key <redacted> is not valid");
    expect(e.message).not.toContain(plain);
  });

  test("sanitizeExcerpt: key, bearer tokens, sk- tokens, whitespace, length", () => {
    const t = sanitizeExcerpt(`x ${KEY}\n\n Bearer abc.def sk-abcdefghijklmnop ${"y".repeat(500)}`, 60);
    expect(t).not.toContain(KEY);
    expect(t).not.toContain("abc.def");
    expect(t).not.toContain("abcdefghijklmnop");
    expect(t.length).toBeLessThanOrEqual(61);
  });

  test("no error produced in this file contains the key", () => {
    expect(errors.length).toBeGreaterThan(10);
    for (const m of errors) expect(m).not.toContain(KEY);
  });
});

test("retryDelay: exponential, capped, jittered within ±25%", () => {
  const p = { ...DEFAULT_RETRY_POLICY };
  expect(retryDelay(0, p, 0)).toBe(750);
  expect(retryDelay(0, p, 1)).toBe(1250);
  expect(retryDelay(10, p, 0.5)).toBe(30_000);
  expect(retryDelay(0, p, 0.5, 90_000)).toBe(60_000);
  expect(isDlError(new DlError("backend", "x"), "backend")).toBe(true);
});
