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
    expect(e.message).toContain("[redacted]");
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
