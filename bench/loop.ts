/**
 * bench/loop — what dl's agent loop costs per turn, beside a bare fetch loop that sends
 * the very same requests, measured in the same run (the machine is shared and noisy:
 * compare the ratio and the per-turn difference, not absolute figures).
 *
 *   bun bench/loop.ts [reps=15]
 *
 * The conversation: 25 turns against a zero-latency fake (Bun.serve on 127.0.0.1, in
 * this process, replies pre-encoded so its cost is tiny and the same for both sides).
 * Turns 1-24 each ask for one read_file of a different ~20 KB file (the tool_result is
 * ~20 KB); turn 25 answers with text. max_turns is 25, so the countdown notes are in.
 *
 * - dl: runAgent + the real HTTP client (complete) against the fake, per wire format,
 *   streaming (SSE) and not (JSON).
 * - baseline: the request bodies dl sent (captured byte for byte by the fake on a first
 *   run), replayed by a loop of plain fetch POSTs with the same headers; each reply is
 *   read whole and minimally parsed (SSE: split lines + JSON.parse of each data line).
 *   So dl − baseline is dl's own work per turn: prompt building, pruning, serializing the
 *   growing history, tool execution, SSE parsing and normalization.
 * - baseline+stringify: the same replay, but each body is JSON.stringify'd from its object
 *   before sending — the least any client that keeps a conversation must do, so the ratio
 *   against it is the one that says how lean dl is.
 * - tool execution is dl work the baseline does not do; read_file is timed alone too, so
 *   the overhead is also shown without it.
 * - SSE parse throughput of both readers over a large synthetic stream (as bench/sse.ts).
 *
 * Aims (issue 3): < 1 ms of dl time per turn, ratio < 1.2, SSE > 100 MB/s.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Agent } from "../src/agent/lookup.ts";
import { runAgent } from "../src/agent/loop.ts";
import { buildTools } from "../src/agent/tools/index.ts";
import { AnthropicStream } from "../src/backends/anthropic.ts";
import { complete } from "../src/backends/client.ts";
import { requestHeaders } from "../src/backends/http.ts";
import { OpenaiStream } from "../src/backends/openai.ts";
import { endpointFor } from "../src/backends/route.ts";
import { readSse } from "../src/backends/sse.ts";
import type { Endpoint, ModelRequest, ModelResponse, WireFormat } from "../src/backends/types.ts";
import { defaultAgentSettings } from "../src/dispatch/agent-settings.ts";
import { chunkedStream, syntheticStream } from "./fixture/sse-stream.ts";

const REPS = Number(process.argv[2] ?? 15);
const TURNS = 25;
const TOOL_TURNS = TURNS - 1;
const LINES_PER_FILE = 400; // 43-char lines: read_file output (with line numbers) ≈ 20 KB
const MODELS: Record<WireFormat, string> = {
  // glm- gets cache_control breakpoints (the costlier Anthropic path); gpt- goes to chat/completions.
  anthropic: "glm-bench",
  openai: "gpt-bench",
};

const enc = new TextEncoder();
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

// ---------------------------------------------------------------- workdir and files
const workdir = realpathSync(mkdtempSync(join(tmpdir(), "dl-bench-loop-")));
const fileName = (i: number) => `src/part-${String(i).padStart(2, "0")}.ts`;
mkdirSync(join(workdir, "src"));
for (let i = 1; i <= TOOL_TURNS; i++) {
  const lines: string[] = [];
  for (let l = 1; l <= LINES_PER_FILE; l++)
    lines.push(`export const v${String(i * 1000 + l).padStart(6, "0")} = "lorem ipsum dolor";`);
  writeFileSync(join(workdir, fileName(i)), `${lines.join("\n")}\n`);
}

// ---------------------------------------------------------------- scripted replies
type Reply = { bytes: Uint8Array; ctype: string };
const SSE = "text/event-stream";
const JSON_CT = "application/json";
const sse = (events: [string | null, unknown][]): string =>
  events
    .map(
      ([ev, data]) =>
        `${ev ? `event: ${ev}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    )
    .join("");
const FINAL_WORDS =
  "All 24 parts read. Summary: every file exports 400 constants with the same value; nothing to change.".split(" ");

function anthropicReply(turn: number, stream: boolean): Reply {
  const model = MODELS.anthropic;
  const tool = turn <= TOOL_TURNS;
  const usage = { input_tokens: 1000 + turn, cache_read_input_tokens: 500, output_tokens: 40 };
  if (!stream) {
    const content = tool
      ? [
          { type: "text", text: `Reading part ${turn}.` },
          { type: "tool_use", id: `toolu_${turn}`, name: "read_file", input: { path: fileName(turn) } },
        ]
      : [{ type: "text", text: FINAL_WORDS.join(" ") }];
    return {
      ctype: JSON_CT,
      bytes: enc.encode(
        JSON.stringify({
          id: `msg_${turn}`,
          type: "message",
          role: "assistant",
          model,
          content,
          stop_reason: tool ? "tool_use" : "end_turn",
          usage,
        }),
      ),
    };
  }
  const ev: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: `msg_${turn}`,
          type: "message",
          role: "assistant",
          model,
          content: [],
          usage: { input_tokens: usage.input_tokens, cache_read_input_tokens: 500, output_tokens: 1 },
        },
      },
    ],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ];
  const words = tool ? ["Reading ", "part ", `${turn}.`] : FINAL_WORDS.map((w) => `${w} `);
  for (const w of words)
    ev.push(["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: w } }]);
  ev.push(["content_block_stop", { type: "content_block_stop", index: 0 }]);
  if (tool) {
    ev.push([
      "content_block_start",
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: `toolu_${turn}`, name: "read_file", input: {} },
      },
    ]);
    // Arguments split across deltas, as real servers send them.
    for (const part of ['{"pa', 'th": "', fileName(turn).slice(0, 6), fileName(turn).slice(6), '"}']) {
      ev.push([
        "content_block_delta",
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: part } },
      ]);
    }
    ev.push(["content_block_stop", { type: "content_block_stop", index: 1 }]);
  }
  ev.push([
    "message_delta",
    { type: "message_delta", delta: { stop_reason: tool ? "tool_use" : "end_turn" }, usage: { output_tokens: 40 } },
  ]);
  ev.push(["message_stop", { type: "message_stop" }]);
  return { ctype: SSE, bytes: enc.encode(sse(ev)) };
}

function openaiReply(turn: number, stream: boolean): Reply {
  const model = MODELS.openai;
  const tool = turn <= TOOL_TURNS;
  const usage = { prompt_tokens: 1500 + turn, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 500 } };
  const call = (args: string) => ({
    index: 0,
    id: `call_${turn}`,
    type: "function",
    function: { name: "read_file", arguments: args },
  });
  if (!stream) {
    const message = tool
      ? {
          role: "assistant",
          content: `Reading part ${turn}.`,
          tool_calls: [call(JSON.stringify({ path: fileName(turn) }))],
        }
      : { role: "assistant", content: FINAL_WORDS.join(" ") };
    const body = {
      id: `chatcmpl-${turn}`,
      object: "chat.completion",
      created: 0,
      model,
      choices: [{ index: 0, message, finish_reason: tool ? "tool_calls" : "stop" }],
      usage,
    };
    return { ctype: JSON_CT, bytes: enc.encode(JSON.stringify(body)) };
  }
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: `chatcmpl-${turn}`,
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const ev: [null, unknown][] = [[null, chunk({ role: "assistant", content: "" })]];
  const words = tool ? ["Reading ", "part ", `${turn}.`] : FINAL_WORDS.map((w) => `${w} `);
  for (const w of words) ev.push([null, chunk({ content: w })]);
  if (tool) {
    ev.push([null, chunk({ tool_calls: [call("")] })]);
    for (const part of ['{"pa', 'th": "', fileName(turn).slice(0, 6), fileName(turn).slice(6), '"}']) {
      ev.push([null, chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] })]);
    }
  }
  ev.push([null, chunk({}, tool ? "tool_calls" : "stop")]);
  ev.push([null, { id: `chatcmpl-${turn}`, object: "chat.completion.chunk", created: 0, model, choices: [], usage }]);
  ev.push([null, "[DONE]"]);
  return { ctype: SSE, bytes: enc.encode(sse(ev)) };
}

// ---------------------------------------------------------------- the fake server
type Mode = { format: WireFormat; stream: boolean };
const MODE_LIST: Mode[] = [
  { format: "anthropic", stream: true },
  { format: "openai", stream: true },
  { format: "anthropic", stream: false },
  { format: "openai", stream: false },
];
const modeName = (m: Mode) => `${m.format} ${m.stream ? "SSE" : "JSON"}`;
const replies = new Map<string, Reply[]>(
  MODE_LIST.map((m) => [
    modeName(m),
    Array.from({ length: TURNS }, (_, i) => (m.format === "anthropic" ? anthropicReply : openaiReply)(i + 1, m.stream)),
  ]),
);

// The fake is a shared-variable state machine: the bench sets the script and rewinds
// the turn counter before each conversation, so the fake never parses a request.
const fake = { script: [] as Reply[], turn: 0, capture: null as string[] | null };
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = await req.text(); // both sides pay for reading the request
    if (fake.capture) fake.capture.push(body);
    const r = fake.script[fake.turn++];
    if (!r) return new Response("script exhausted", { status: 500 });
    return new Response(r.bytes, { headers: { "content-type": r.ctype } });
  },
});
const baseUrl = `http://127.0.0.1:${server.port}`;

// ---------------------------------------------------------------- the two sides
const agent: Agent = {
  name: "bench-reader",
  file: "/bench/bench-reader.md",
  source: "global",
  meta: { raw: {} },
  body: "You read source files and summarize them. Read each part in turn, then report.",
};
const TASK = `Read ${fileName(1)} through ${fileName(TOOL_TURNS)} one by one with read_file, then summarize what they contain.`;

type DlRun = { ms: number; inClientMs: number };

async function runDl(mode: Mode): Promise<DlRun> {
  const model = MODELS[mode.format];
  const settings = defaultAgentSettings({ streaming: mode.stream, defaultModel: model });
  let inClient = 0;
  fake.script = replies.get(modeName(mode))!;
  fake.turn = 0;
  const t0 = performance.now();
  const r = await runAgent({
    agent,
    task: TASK,
    workdir,
    model,
    max_turns: TURNS,
    // Production passes a per-turn deadline; its timer is part of the per-turn cost.
    complete: async (req: ModelRequest): Promise<ModelResponse> => {
      const a = performance.now();
      try {
        return await complete(req, { turnTimeoutMs: 600_000 });
      } finally {
        inClient += performance.now() - a;
      }
    },
    endpoint: (m) => endpointFor({ baseUrl, apiKey: "sk-bench-not-a-real-key", model: m }),
    settings,
  });
  const ms = performance.now() - t0;
  if (!r.success || r.turns !== TURNS || !r.final_response.startsWith("All 24 parts")) {
    throw new Error(
      `dl run (${modeName(mode)}) did not finish the script: ${JSON.stringify({ success: r.success, turns: r.turns, stop: r.stop_reason, error: r.error })}`,
    );
  }
  return { ms, inClientMs: inClient };
}

function minimalParse(text: string, isSse: boolean): number {
  if (!isSse) return JSON.parse(text) ? 1 : 0;
  let n = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const d = line.slice(6);
    if (d !== "[DONE]" && JSON.parse(d)) n++;
  }
  return n;
}

/** Replays `bodies` (strings as captured, or objects serialized per request). */
async function runBaseline(mode: Mode, bodies: readonly (string | object)[], ep: Endpoint): Promise<number> {
  const headers = requestHeaders(ep);
  fake.script = replies.get(modeName(mode))!;
  fake.turn = 0;
  const t0 = performance.now();
  for (const b of bodies) {
    const body = typeof b === "string" ? b : JSON.stringify(b);
    const res = await fetch(ep.url, { method: "POST", headers, body });
    const text = await res.text();
    if (!res.ok || minimalParse(text, mode.stream) === 0) throw new Error(`baseline got HTTP ${res.status}`);
  }
  return performance.now() - t0;
}

/** read_file alone, the same 24 calls dl makes: tool work the baseline never does. */
async function toolOnlyMs(): Promise<number> {
  const tools = buildTools(defaultAgentSettings());
  const read = tools.get("read_file")!;
  const ctx = { workdir, allowEscape: false, signal: new AbortController().signal };
  const t0 = performance.now();
  for (let i = 1; i <= TOOL_TURNS; i++) {
    const out = await read.run({ path: fileName(i) }, ctx);
    if (out.is_error) throw new Error(out.content);
  }
  return performance.now() - t0;
}

// ---------------------------------------------------------------- SSE throughput
const SSE_MB = 16;

async function sseThroughput(format: WireFormat): Promise<{ mb: number; dl: number; base: number }> {
  const bytes = syntheticStream(format, SSE_MB);
  const dlOnce = async () => {
    const state = format === "anthropic" ? new AnthropicStream() : new OpenaiStream();
    await readSse(chunkedStream(bytes), state.onEvent);
    if (!state.done || state.result().content.length !== 1) throw new Error("reader lost the stream");
  };
  const baseOnce = async () => {
    const dec = new TextDecoder();
    const reader = chunkedStream(bytes).getReader();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const lines = (rest + dec.decode(value, { stream: true })).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line.startsWith("data: ") && line !== "data: [DONE]") JSON.parse(line.slice(6));
    }
  };
  const best = async (fn: () => Promise<void>) => {
    await fn();
    let min = Infinity;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await fn();
      min = Math.min(min, performance.now() - t);
    }
    return min;
  };
  const mb = bytes.length / 1e6;
  return { mb, dl: mb / ((await best(dlOnce)) / 1000), base: mb / ((await best(baseOnce)) / 1000) };
}

// ---------------------------------------------------------------- run
const f = (n: number, d = 2) => n.toFixed(d);
try {
  const benchStart = performance.now();
  for (let i = 0; i < 3; i++) await toolOnlyMs(); // warm-up
  let worstPerTurn = 0;
  console.log(
    `bench/loop: ${TURNS}-turn conversation (${TOOL_TURNS} read_file results of ~20 KB, then a text answer), median of ${REPS} interleaved runs per side (Bun ${Bun.version}, ${process.platform}/${process.arch})`,
  );
  for (const mode of MODE_LIST) {
    // Capture the exact bodies dl sends, and check a second dl run sends the same bytes.
    const bodies: string[] = [];
    fake.capture = bodies;
    await runDl(mode);
    const again: string[] = [];
    fake.capture = again;
    await runDl(mode);
    fake.capture = null;
    if (bodies.length !== TURNS || again.some((b, i) => b !== bodies[i]))
      throw new Error(`${modeName(mode)}: dl's requests are not reproducible; the baseline would not replay them`);
    const ep = endpointFor({ baseUrl, apiKey: "sk-bench-not-a-real-key", model: MODELS[mode.format] });
    const objects = bodies.map((b) => JSON.parse(b) as object);
    const reqKb = bodies.reduce((a, b) => a + b.length, 0) / 1024;
    for (let i = 0; i < 3; i++) {
      await runBaseline(mode, bodies, ep);
      await runBaseline(mode, objects, ep);
      await runDl(mode);
    }
    const dl: number[] = [];
    const inClient: number[] = [];
    const base: number[] = [];
    const baseStr: number[] = [];
    const tool: number[] = [];
    for (let i = 0; i < REPS; i++) {
      // Rotate the order so drift on the machine hits every side alike.
      const sides = [
        async () => base.push(await runBaseline(mode, bodies, ep)),
        async () => baseStr.push(await runBaseline(mode, objects, ep)),
        async () => {
          const r = await runDl(mode);
          dl.push(r.ms);
          inClient.push(r.inClientMs);
        },
        async () => tool.push(await toolOnlyMs()),
      ];
      for (let k = 0; k < sides.length; k++) await sides[(i + k) % sides.length]!();
    }
    const [mDl, mBase, mStr, mTool, mIn] = [median(dl), median(base), median(baseStr), median(tool), median(inClient)];
    const pt = (ms: number) => f(ms / TURNS, 3);
    console.log(
      `  ${modeName(mode).padEnd(14)} per turn: dl ${pt(mDl)} ms (client ${pt(mIn)}, read_file ${f(mTool / TOOL_TURNS, 3)}, loop rest ${pt(mDl - mIn - mTool)})  ` +
        `baseline ${pt(mBase)}  baseline+stringify ${pt(mStr)}  [${f(reqKb / TURNS, 0)} KB/request]\n` +
        `  ${"".padEnd(14)} dl overhead ${pt(mDl - mBase)} ms/turn (${pt(mDl - mTool - mBase)} without read_file; ${pt(mDl - mStr)} vs baseline+stringify)  ` +
        `ratio ${f(mDl / mBase)}x (${f((mDl - mTool) / mBase)}x without read_file; ${f(mDl / mStr)}x / ${f((mDl - mTool) / mStr)}x vs baseline+stringify)`,
    );
    worstPerTurn = Math.max(worstPerTurn, (mDl - mBase) / TURNS);
  }
  // Derived, not measured: with a real model every turn also waits for it, so the same
  // overhead is a far smaller share. Shown so the zero-latency ratio is read in context.
  const modelMs = 100;
  console.log(
    `  derived: at ${modelMs} ms of model time per turn, the worst overhead above (${f(worstPerTurn, 3)} ms/turn) is a ratio of ${f((modelMs + worstPerTurn) / modelMs, 3)}x`,
  );
  for (const format of ["anthropic", "openai"] as const) {
    const t = await sseThroughput(format);
    console.log(
      `  sse ${format.padEnd(9)} ${f(t.mb, 1)} MB: dl reader ${f(t.dl, 0)} MB/s, baseline decode+split+JSON.parse ${f(t.base, 0)} MB/s, ratio ${f(t.dl / t.base)}x`,
    );
  }
  console.log(
    `  aims: < 1 ms dl overhead per turn, ratio < 1.2, SSE > 100 MB/s  (bench took ${f((performance.now() - benchStart) / 1000, 1)} s)`,
  );
} finally {
  server.stop(true);
  rmSync(workdir, { recursive: true, force: true });
}
