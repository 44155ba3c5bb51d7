/**
 * bench/startup — how fast `dl serve` answers `initialize` and how much memory it holds
 * after `tools/list`, beside two minimal one-tool MCP servers on the same SDK measured in
 * the same run: run by Node.js, and compiled by Bun like dl (the floor for a Bun binary
 * on this SDK). This machine is noisy: compare the ratios, not the absolute figures.
 *
 *   npm run build && bun bench/startup.ts [runs=20]
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const RUNS = Number(process.argv[2] ?? 20);
/** The aims of issue 9, on an idle machine: answer `initialize` within 30 ms, idle within 50 MB. */
const AIM_INIT_MS = 30;
const AIM_RSS_MB = 50;
const root = resolve(import.meta.dir, "..");
const dl = join(root, "dist", "dl");
if (!existsSync(dl)) {
  console.error("dist/dl is missing: run `npm run build` first");
  process.exit(2);
}

const home = mkdtempSync(join(tmpdir(), "dl-bench-"));
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DELEGATE_LOG_LEVEL: "warn" };

const init = (id: number) =>
  `${JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  })}\n`;
const initialized = `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`;
const listTools = `${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`;

type Memory = { rss: number; anon: number; file: number };

/**
 * Resident memory in MB. On Linux also its two parts: anonymous (this process's own
 * heap and stacks) and file-backed (pages of the executable and libraries, shared by
 * every process running them, and more or fewer depending on what the page cache holds).
 */
function memoryOf(pid: number): Memory {
  if (process.platform === "linux") {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
    return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
  }
  const out = Bun.spawnSync(["ps", "-o", "rss=", "-p", String(pid)])
    .stdout.toString()
    .trim();
  return { rss: Number(out) / 1024, anon: NaN, file: NaN };
}

async function oneRun(cmd: string[]): Promise<{ initMs: number; memory: Memory }> {
  const t0 = performance.now();
  const p = Bun.spawn(cmd, { env, stdin: "pipe", stdout: "pipe", stderr: "ignore", cwd: root });
  p.stdin.write(init(1));
  p.stdin.flush();
  const reader = p.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  let initMs = NaN;
  while (true) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd[0]} exited before answering`);
    buf += dec.decode(value, { stream: true });
    if (Number.isNaN(initMs) && buf.includes('"id":1')) {
      initMs = performance.now() - t0;
      p.stdin.write(initialized + listTools);
      p.stdin.flush();
    }
    if (buf.includes('"id":2')) break;
  }
  const memory = memoryOf(p.pid);
  p.stdin.end();
  await p.exited;
  return { initMs, memory };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function measure(name: string, cmd: string[]) {
  await oneRun(cmd); // warm the page cache once; not counted
  const init: number[] = [];
  const mem: Memory[] = [];
  // Interleaving is done by the caller; this runs one server's batch.
  for (let i = 0; i < RUNS; i++) {
    const r = await oneRun(cmd);
    init.push(r.initMs);
    mem.push(r.memory);
  }
  return {
    name,
    initMedian: median(init),
    initP90: [...init].sort((a, b) => a - b)[Math.floor(init.length * 0.9)]!,
    rssMedian: median(mem.map((m) => m.rss)),
    anonMedian: median(mem.map((m) => m.anon)),
    fileMedian: median(mem.map((m) => m.file)),
  };
}

const baselineSource = join(root, "bench", "fixture", "node-mcp-server.mjs");
const nodeCmd = ["node", baselineSource];
/** The same one-tool server, compiled as build.ts compiles dl (minified, bytecode), without dl's start-up work. */
async function compiledBaseline(): Promise<string> {
  const outfile = join(home, "bun-mcp-server");
  const built = await Bun.build({
    entrypoints: [baselineSource],
    minify: true,
    bytecode: true,
    format: "esm",
    compile: { outfile },
  });
  if (!built.success) throw new Error(`compiling the baseline failed: ${built.logs.join("; ")}`);
  return outfile;
}
const bunCmd = [await compiledBaseline()];
const dlRes = await measure("dl serve (compiled)", [dl, "serve"]);
const bunRes = await measure("bun-compiled, same SDK", bunCmd);
const nodeRes = await measure("node + same SDK (baseline)", nodeCmd);

console.log(
  `bench/startup: ${RUNS} runs each, spawn → initialize answered; memory after tools/list (RSS = anonymous + file-backed)`,
);
const mb = (n: number) => n.toFixed(1).padStart(5);
for (const r of [dlRes, bunRes, nodeRes]) {
  console.log(
    `  ${r.name.padEnd(28)} initialize median ${r.initMedian.toFixed(1).padStart(6)} ms  p90 ${r.initP90.toFixed(1).padStart(6)} ms   RSS median ${mb(r.rssMedian)} MB (anon ${mb(r.anonMedian)}, file ${mb(r.fileMedian)})`,
  );
}
const verdict = (value: number, aim: number, unit: string) =>
  `${value.toFixed(1)} ${unit} (aim <= ${aim} ${unit}: ${value <= aim ? "met" : "missed"})`;
console.log(
  `  aims for dl serve: initialize ${verdict(dlRes.initMedian, AIM_INIT_MS, "ms")}, RSS ${verdict(dlRes.rssMedian, AIM_RSS_MB, "MB")}`,
);
for (const base of [bunRes, nodeRes]) {
  console.log(
    `  ratio dl / ${base.name}: initialize ${(dlRes.initMedian / base.initMedian).toFixed(2)}x, RSS ${(dlRes.rssMedian / base.rssMedian).toFixed(2)}x, anon ${(dlRes.anonMedian / base.anonMedian).toFixed(2)}x`,
  );
}
