import { afterAll, describe, expect, test } from "bun:test";
import { complete } from "../../src/backends/client.ts";
import { readBodyCapped } from "../../src/backends/http.ts";
import { SSE_MAX_LINE_CHARS } from "../../src/backends/sse.ts";
import { isDlError } from "../../src/errors.ts";
import { fakeClock, KEY, request } from "./util.ts";

/**
 * Endpoints that misbehave on purpose: a redirect that would carry the key elsewhere, an
 * error page that echoes credentials, a stream that never ends a line. dl must refuse
 * each once, without retrying and without leaking.
 */
const servers: { stop: (force?: boolean) => void }[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

function serve(fetch: (req: Request) => Response | Promise<Response>) {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch });
  servers.push(s);
  return s;
}

async function failure(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (isDlError(e)) return e;
    throw e;
  }
  throw new Error("expected a failure");
}

describe("hostile endpoints", () => {
  test("a redirect is never followed: the target sees nothing, no retry, the message names only the host", async () => {
    let targetHits = 0;
    const target = serve(() => {
      targetHits++;
      return new Response("{}");
    });
    let hits = 0;
    const redirector = serve(() => {
      hits++;
      return new Response(null, {
        status: 307,
        headers: { location: `http://127.0.0.1:${target.port}/internal/secret-path?token=x` },
      });
    });
    const { clock } = fakeClock();
    const e = await failure(complete(request(`http://127.0.0.1:${redirector.port}`, "glm-x"), { clock }));
    expect(targetHits).toBe(0);
    expect(hits).toBe(1);
    expect(e.message).toContain("307");
    expect(e.message).toContain(`redirect to 127.0.0.1:${target.port}`);
    expect(e.message).toContain("never follows redirects");
    expect(e.message).not.toContain("secret-path");
  });

  test("an error body echoing the key or a virtual key is redacted", async () => {
    const vk = "vk-lane-code-98765";
    const echo = serve(
      async (req) =>
        new Response(`bad auth: key=${req.headers.get("x-api-key")} vk=${req.headers.get("x-bf-vk")}`, { status: 401 }),
    );
    const req = request(`http://127.0.0.1:${echo.port}`, "glm-x");
    req.endpoint.headers = { "x-bf-vk": vk };
    const e = await failure(complete(req, { clock: fakeClock().clock }));
    expect(e.message).toContain("401");
    expect(e.message).toContain("<redacted>");
    expect(e.message).not.toContain(KEY);
    expect(e.message).not.toContain(vk);
  });

  test("a stream that never ends its line is refused once, not retried and not buffered forever", async () => {
    let hits = 0;
    const endless = serve(() => {
      hits++;
      const chunk = new TextEncoder().encode("x".repeat(1 << 20));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode("event: message_start\ndata: "));
        },
        pull(c) {
          // A little past the cap, then it would go on; dl must stop reading first.
          if (sent++ > SSE_MAX_LINE_CHARS / (1 << 20) + 4) return c.close();
          c.enqueue(chunk);
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const e = await failure(
      complete(request(`http://127.0.0.1:${endless.port}`, "glm-x"), { clock: fakeClock().clock }),
    );
    expect(e.message).toContain("exceeded");
    expect((e.data as { retryable?: boolean }).retryable).toBe(false);
    expect(hits).toBe(1);
  });

  test("bodies are read only up to their cap", async () => {
    const big = new Response("a".repeat(10_000));
    expect(await readBodyCapped(big, 100, true)).toBe("a".repeat(100));
    await expect(readBodyCapped(new Response("b".repeat(10_000)), 100, false)).rejects.toThrow("exceeded 100 bytes");
    expect(await readBodyCapped(new Response("small"), 100, false)).toBe("small");
  });
});

/**
 * The fault matrix, one scripted fault per case: each either recovers (retried, with the
 * wait the backend asked for) or fails once with a message that says what happened,
 * before the turn's deadline.
 */
type Fault = (req: Request, hit: number) => Response | Promise<Response>;

const enc = new TextEncoder();
const ev = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
function okEvents(text = "ok", usage: Record<string, unknown> = { output_tokens: 3 }): string {
  return [
    ev("message_start", { message: { model: "glm-x", usage: { input_tokens: 5 } } }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
    ev("content_block_stop", { index: 0 }),
    ev("message_delta", { delta: { stop_reason: "end_turn" }, usage }),
    ev("message_stop", {}),
  ].join("");
}
const sseResponse = (body: string | ReadableStream<Uint8Array>) =>
  new Response(body, { headers: { "content-type": "text/event-stream" } });

function scripted(...steps: Fault[]) {
  let hits = 0;
  const s = serve((req) => {
    const step = steps[Math.min(hits, steps.length - 1)]!;
    hits++;
    return step(req, hits);
  });
  return { url: `http://127.0.0.1:${s.port}`, hits: () => hits };
}

async function outcome(url: string, turnTimeoutMs = 10_000) {
  const { clock, sleeps } = fakeClock();
  const started = performance.now();
  try {
    const r = await complete(request(url, "glm-x"), { clock, turnTimeoutMs });
    return { ok: r, sleeps, ms: performance.now() - started };
  } catch (e) {
    if (!isDlError(e)) throw e;
    return { err: e, sleeps, ms: performance.now() - started };
  }
}
const text = (r: Awaited<ReturnType<typeof complete>>) =>
  r.content.map((b) => (b.type === "text" ? b.text : "")).join("");

describe("hostile fault matrix: recovery, or one clear failure before the deadline", () => {
  test("429 with Retry-After: waits what the backend asked, then recovers", async () => {
    const b = scripted(
      () => new Response("slow down", { status: 429, headers: { "retry-after": "7" } }),
      () => sseResponse(okEvents()),
    );
    const o = await outcome(b.url);
    expect(text(o.ok!)).toBe("ok");
    expect(o.sleeps).toEqual([7000]);
    expect(b.hits()).toBe(2);
  });

  test("429 without Retry-After: backs off on its own, then recovers", async () => {
    const b = scripted(
      () => new Response("", { status: 429 }),
      () => sseResponse(okEvents()),
    );
    const o = await outcome(b.url);
    expect(text(o.ok!)).toBe("ok");
    expect(o.sleeps).toHaveLength(1);
    expect(o.sleeps[0]).toBeGreaterThan(0);
  });

  test("a 5xx once is retried; a 5xx every time ends in one bounded, explained failure", async () => {
    const once = scripted(
      () => new Response("bad gateway", { status: 502 }),
      () => sseResponse(okEvents()),
    );
    expect(text((await outcome(once.url)).ok!)).toBe("ok");
    const always = scripted(() => new Response("upstream down", { status: 503 }));
    const o = await outcome(always.url);
    expect(o.err!.message).toContain("HTTP 503");
    expect(o.err!.message).toContain("Next:");
    expect(always.hits()).toBeGreaterThan(1);
    expect(always.hits()).toBeLessThan(10);
  });

  test("a stream cut mid-event is retried and recovers; cut every time, it says it ended early", async () => {
    const half = okEvents().slice(0, 180);
    const b = scripted(
      () => sseResponse(half),
      () => sseResponse(okEvents()),
    );
    expect(text((await outcome(b.url)).ok!)).toBe("ok");
    const always = scripted(() => sseResponse(half));
    const o = await outcome(always.url);
    expect(o.err!.message).toContain("ended early");
  });

  test("garbage lines between events are ignored; a data line that is not JSON is one clear protocol error", async () => {
    const noise = `garbage without a colon\n: a comment\nretry: 10\nid: 4\n${okEvents()}`;
    expect(text((await outcome(scripted(() => sseResponse(noise)).url)).ok!)).toBe("ok");
    const broken = scripted(() => sseResponse(`event: message_start\ndata: {not json\n\n`));
    const o = await outcome(broken.url);
    expect(o.err!.message).toContain("unusable reply");
    expect(broken.hits()).toBe(1);
  });

  test("a wrong content type (an HTML page with 200) is one clear failure, not retried", async () => {
    const b = scripted(
      () => new Response("<html><body>proxy login</body></html>", { headers: { "content-type": "text/html" } }),
    );
    const o = await outcome(b.url);
    expect(o.err!.message).toMatch(/unusable reply|ended early/);
    expect(o.err!.message).toContain("127.0.0.1");
    expect(b.hits()).toBeLessThan(10);
  });

  test("an empty 200 is a clear failure", async () => {
    const b = scripted(() => new Response(null, { status: 200, headers: { "content-type": "application/json" } }));
    const o = await outcome(b.url);
    expect(o.err).toBeDefined();
    expect(o.err!.message).toMatch(/unusable reply|ended early|empty/);
  });

  test("a reply that never ends fails at the turn deadline, not later", async () => {
    const b = scripted(() =>
      sseResponse(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(enc.encode(ev("message_start", { message: { model: "glm-x", usage: {} } })));
          },
        }),
      ),
    );
    const o = await outcome(b.url, 700);
    expect(o.err!.message).toMatch(/deadline|timed out|time limit|budget/i);
    expect(o.ms).toBeLessThan(5_000);
  });

  test("a corrupt gzip body says it could not be decompressed", async () => {
    const b = scripted(
      () =>
        new Response(new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef]), {
          headers: { "content-type": "application/json", "content-encoding": "gzip" },
        }),
    );
    const o = await outcome(b.url);
    expect(o.err!.message).toContain("could not be decompressed");
  });

  test("one huge token (4 MB in a single delta) is taken whole", async () => {
    const huge = "x".repeat(4 * 1024 * 1024);
    const o = await outcome(scripted(() => sseResponse(okEvents(huge))).url);
    expect(text(o.ok!).length).toBe(huge.length);
  });

  test("an absurd block index is refused at once, without walking a sparse array", async () => {
    const body = okEvents().replaceAll('"index":0', '"index":4294967294');
    const b = scripted(() => sseResponse(body));
    const o = await outcome(b.url);
    expect(o.err!.message).toContain("index 4294967294 is not an integer in 0..1023");
    expect(o.ms).toBeLessThan(2_000);
    expect(b.hits()).toBe(1);
  });

  test("non-integer, negative and string usage figures are coerced to whole non-negative numbers", async () => {
    const o = await outcome(
      scripted(() =>
        sseResponse(okEvents("ok", { output_tokens: 2.7, input_tokens: -4, cache_read_input_tokens: "9" })),
      ).url,
    );
    const u = o.ok!.usage;
    expect(text(o.ok!)).toBe("ok");
    for (const v of Object.values(u)) {
      expect(Number.isInteger(v)).toBe(true);
      expect(v).toBeGreaterThanOrEqual(0);
    }
    expect(u.output_tokens).toBe(2);
  });
});
