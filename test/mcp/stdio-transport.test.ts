import { expect, test } from "bun:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { CappedStdioTransport } from "../../src/mcp/stdio-transport.ts";
import { until } from "../helpers/until.ts";

/** A stdin the test writes to, and a stdout sink that keeps what the transport wrote. */
function pipes() {
  let push!: ReadableStreamDefaultController<Uint8Array>;
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      push = c;
    },
  });
  const written: string[] = [];
  const output = { write: (text: string) => written.push(text), flush: () => Promise.resolve(0) };
  const send = (text: string) => push.enqueue(new TextEncoder().encode(text));
  const answers = () =>
    written
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return { input, output, send, end: () => push.close(), fail: (e: Error) => push.error(e), answers };
}

test("messages arrive across chunk boundaries; bad lines and oversize ones are answered and reading goes on", async () => {
  const p = pipes();
  const t = new CappedStdioTransport(200, p.input, p.output);
  const got: JSONRPCMessage[] = [];
  let ended = 0;
  t.onmessage = (m) => got.push(m);
  t.onerror = () => undefined;
  t.onend = () => ended++;
  await t.start();
  p.send('{"jsonrpc":"2.0","id":1,"me');
  p.send('thod":"ping"}\nnot json\n');
  p.send(`{"jsonrpc":"2.0","id":7,"method":"x","params":{"pad":"${"a".repeat(300)}"}}\n`);
  p.send('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  await until(() => got.length === 2 && p.answers().length === 2, "two messages and two answers");
  expect(got.map((m) => ("id" in m ? m.id : null))).toEqual([1, 2]);
  const [parse, oversize] = p.answers();
  expect(parse.error.code).toBe(-32700);
  expect(oversize).toMatchObject({ id: 7, error: { code: -32600 } });
  expect(ended).toBe(0);
  p.end();
  await until(() => ended === 1, "onend after stdin ends");
});

test("replies are written whole and in the order they were sent", async () => {
  const p = pipes();
  const t = new CappedStdioTransport(1000, p.input, p.output);
  await t.start();
  await Promise.all([1, 2, 3].map((id) => t.send({ jsonrpc: "2.0", id, result: {} })));
  expect(p.answers().map((a) => a.id)).toEqual([1, 2, 3]);
});

test("a stdin that fails ends the session too, and a transport closed first does not call onend", async () => {
  const failing = pipes();
  const t = new CappedStdioTransport(100, failing.input, failing.output);
  const errors: string[] = [];
  let ended = false;
  t.onerror = (e) => errors.push(e.message);
  t.onend = () => {
    ended = true;
  };
  await t.start();
  failing.fail(new Error("EIO"));
  await until(() => ended, "onend after stdin fails");
  expect(errors).toContain("EIO");

  const closing = pipes();
  const c = new CappedStdioTransport(100, closing.input, closing.output);
  let closedEnd = false;
  let closed = 0;
  c.onend = () => {
    closedEnd = true;
  };
  c.onclose = () => closed++;
  await c.start();
  await c.close();
  await c.close();
  closing.end();
  expect(closed).toBe(1);
  // The reader lets go of stdin once it has seen the end; by then onend would have run.
  await until(() => !closing.input.locked, "the reader let go of stdin");
  expect(closedEnd).toBe(false);
});

test("answered() waits for the requests read so far, and only for those", async () => {
  const p = pipes();
  const t = new CappedStdioTransport(1000, p.input, p.output);
  const got: JSONRPCMessage[] = [];
  t.onmessage = (m) => got.push(m);
  await t.start();
  await t.answered(); // nothing open: at once
  p.send('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  await until(() => got.length === 2, "a request and a notification");
  let idle = false;
  const waiting = t.answered().then(() => {
    idle = true;
  });
  await t.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } });
  expect(idle).toBe(false);
  await t.send({ jsonrpc: "2.0", id: 1, result: {} });
  await waiting;
  expect(idle).toBe(true);
});

test("a stdout the client has closed ends the session once, and no write throws", async () => {
  const input = new ReadableStream<Uint8Array>();
  const refused = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
  const output = { write: () => Promise.reject(refused), flush: () => 0 };
  const t = new CappedStdioTransport(100, input, output);
  const ends: string[] = [];
  const errors: string[] = [];
  t.onend = (why) => ends.push(why);
  t.onerror = (e) => errors.push(e.message);
  await t.start();
  await t.send({ jsonrpc: "2.0", id: 1, result: {} });
  await t.send({ jsonrpc: "2.0", id: 2, result: {} });
  expect(ends).toEqual(["stdout closed"]);
  expect(errors).toEqual(["write EPIPE", "write EPIPE"]);
});
