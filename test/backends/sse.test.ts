import { expect, test } from "bun:test";
import { readSse, SseParser } from "../../src/backends/sse.ts";

function parseAll(chunks: string[]): [string, string][] {
  const out: [string, string][] = [];
  const p = new SseParser((e, d) => out.push([e, d]));
  for (const c of chunks) p.push(c);
  p.end();
  return out;
}

const STREAM =
  'event: a\ndata: {"x":1}\n\n: comment\n\nid: 3\ndata: line1\ndata:line2\n\nevent: b\r\ndata: crlf\r\n\r\ndata: [DONE]\n\n';
const EXPECTED: [string, string][] = [
  ["a", '{"x":1}'],
  ["", "line1\nline2"],
  ["b", "crlf"],
  ["", "[DONE]"],
];

test("events, comments, multi-line data, CRLF", () => {
  expect(parseAll([STREAM])).toEqual(EXPECTED);
});

test("every split point of the stream gives the same events", () => {
  for (let i = 0; i <= STREAM.length; i++) {
    expect(parseAll([STREAM.slice(0, i), STREAM.slice(i)])).toEqual(EXPECTED);
  }
  expect(parseAll(STREAM.split(""))).toEqual(EXPECTED);
});

test("an unterminated trailing event is dropped (that is how a cut shows)", () => {
  expect(parseAll(['data: 1\n\ndata: {"partial":'])).toEqual([["", "1"]]);
  expect(parseAll(["data: 1\n\ndata: 2\n"])).toEqual([["", "1"]]);
});

test("readSse decodes UTF-8 split across byte chunks", async () => {
  const bytes = new TextEncoder().encode("data: héllo ✓ 🎉\n\n");
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const b of bytes) c.enqueue(new Uint8Array([b]));
      c.close();
    },
  });
  const got: string[] = [];
  await readSse(body, (_e, d) => got.push(d));
  expect(got).toEqual(["héllo ✓ 🎉"]);
});
