/**
 * SSE parse throughput of dl's two stream readers (Anthropic and OpenAI), each over a
 * large synthetic stream of small deltas fed in 16 KiB chunks, against a baseline: a bare
 * TextDecoder + split("\n") loop that JSON.parses every data line over the same bytes.
 * Run: node_modules/.bin/bun bench/sse.ts [MB]
 */
import { AnthropicStream } from "../src/backends/anthropic.ts";
import { OpenaiStream } from "../src/backends/openai.ts";
import { readSse } from "../src/backends/sse.ts";
import { chunkedStream, syntheticStream } from "./fixture/sse-stream.ts";

const targetMb = Number(process.argv[2] ?? 32);

async function ours(bytes: Uint8Array, format: "anthropic" | "openai"): Promise<number> {
  const state = format === "anthropic" ? new AnthropicStream() : new OpenaiStream();
  await readSse(chunkedStream(bytes), state.onEvent);
  const r = state.result();
  if (!state.done || r.content.length !== 1) throw new Error("reader lost the stream");
  const first = r.content[0];
  return first?.type === "text" ? first.text.length : 0;
}

async function baseline(bytes: Uint8Array): Promise<number> {
  const dec = new TextDecoder();
  const reader = chunkedStream(bytes).getReader();
  let rest = "";
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const lines = (rest + dec.decode(value, { stream: true })).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data: ")) continue;
      const d = line.slice(6);
      if (d !== "[DONE]" && JSON.parse(d)) n++;
    }
  }
  return n;
}

/** Best of `runs`: the machine is shared, and the fastest run is the least disturbed one. */
async function time(fn: () => Promise<number>, runs = 7): Promise<number> {
  await fn(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return Math.min(...ms);
}

for (const format of ["anthropic", "openai"] as const) {
  const bytes = syntheticStream(format, targetMb);
  const mb = bytes.length / 1e6;
  const tOurs = await time(() => ours(bytes, format));
  const tBase = await time(() => baseline(bytes));
  const rOurs = mb / (tOurs / 1000);
  const rBase = mb / (tBase / 1000);
  console.log(
    `sse ${format.padEnd(9)} ${mb.toFixed(1)} MB: dl reader ${rOurs.toFixed(0)} MB/s, baseline decode+split+JSON.parse ${rBase.toFixed(0)} MB/s, ratio ${(rOurs / rBase).toFixed(2)}x`,
  );
}
