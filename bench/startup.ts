/**
 * bench/startup — how fast `dl serve` answers its opening request and how much memory it
 * holds after `tools/list`, for both protocol eras (2025-11-25 `initialize`, 2026-07-28
 * `server/discover`), beside the smallest compiled v2 server (one tool, serveStdio)
 * measured in the same run. Also what `tools/list` costs a host per session, in tokens
 * (characters / 4 of name, description and input schema), by default and with every
 * backend's tools (DELEGATE_TOOLS=all). This machine is noisy: compare the ratios.
 *
 *   npm run build && bun bench/startup.ts [runs=20]
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const RUNS = Number(process.argv[2] ?? 20);
/** Issue 21's aims: dl at most 1.0x the baseline's opening time and RSS, tools/list under 3,000 tokens. */
const AIM_RATIO = 1.0;
const AIM_TOKENS = 3000;
const root = resolve(import.meta.dir, "..");
const dl = join(root, "dist", "dl");
if (!existsSync(dl)) {
  console.error("dist/dl is missing: run `npm run build` first");
  process.exit(2);
}

const home = mkdtempSync(join(tmpdir(), "dl-bench-"));
const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DELEGATE_LOG_LEVEL: "warn" };

type Era = "2025-11-25" | "2026-07-28";
const line = (m: object) => `${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`;
const clientInfo = { name: "bench", version: "1" };
/** 2026-07-28 carries the protocol version and client facts on every request. */
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": {},
};
const opening = (era: Era) =>
  era === "2025-11-25"
    ? line({ id: 1, method: "initialize", params: { protocolVersion: era, capabilities: {}, clientInfo } })
    : line({ id: 1, method: "server/discover", params: { _meta: meta } });
const afterOpening = (era: Era) =>
  era === "2025-11-25"
    ? line({ method: "notifications/initialized" }) + line({ id: 2, method: "tools/list" })
    : line({ id: 2, method: "tools/list", params: { _meta: meta } });

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

type Run = { initMs: number; memory: Memory; list: string };

async function oneRun(cmd: string[], era: Era, extraEnv: Record<string, string> = {}): Promise<Run> {
  const t0 = performance.now();
  const env = { ...baseEnv, ...extraEnv };
  const p = Bun.spawn(cmd, { env, stdin: "pipe", stdout: "pipe", stderr: "ignore", cwd: root });
  p.stdin.write(opening(era));
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
      p.stdin.write(afterOpening(era));
      p.stdin.flush();
    }
    if (buf.includes('"id":2') && buf.endsWith("\n")) break;
  }
  const memory = memoryOf(p.pid);
  p.stdin.end();
  await p.exited;
  const list = buf.split("\n").find((l) => l.includes('"id":2')) ?? "";
  return { initMs, memory, list };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function measure(name: string, cmd: string[], era: Era) {
  await oneRun(cmd, era); // warm the page cache once; not counted
  const init: number[] = [];
  const mem: Memory[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await oneRun(cmd, era);
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

/** The smallest v2 server, compiled as build.ts compiles dl (minified, bytecode). */
async function compiledBaseline(): Promise<string> {
  const outfile = join(home, "v2-mcp-server");
  const built = await Bun.build({
    entrypoints: [join(root, "bench", "fixture", "v2-mcp-server.ts")],
    minify: true,
    bytecode: true,
    format: "esm",
    compile: { outfile },
  });
  if (!built.success) throw new Error(`compiling the baseline failed: ${built.logs.join("; ")}`);
  return outfile;
}

/** What tools/list costs per session: characters / 4 of name, description and input schema. */
async function listTokens(extraEnv: Record<string, string>): Promise<{ tools: number; tokens: number }> {
  const { list } = await oneRun([dl, "serve"], "2025-11-25", extraEnv);
  const tools = (
    JSON.parse(list) as { result: { tools: { name: string; description?: string; inputSchema: unknown }[] } }
  ).result.tools;
  const chars = tools.reduce(
    (n, t) => n + t.name.length + (t.description ?? "").length + JSON.stringify(t.inputSchema).length,
    0,
  );
  return { tools: tools.length, tokens: Math.round(chars / 4) };
}

const baseline = [await compiledBaseline()];
const mb = (n: number) => n.toFixed(1).padStart(5);
console.log(`bench/startup: ${RUNS} runs each, spawn → opening answered; memory after tools/list (RSS = anon + file)`);
for (const era of ["2025-11-25", "2026-07-28"] as const) {
  const opened = era === "2025-11-25" ? "initialize" : "server/discover";
  const dlRes = await measure("dl serve", [dl, "serve"], era);
  const baseRes = await measure("v2 one-tool server", baseline, era);
  console.log(`  ${era} (${opened}):`);
  for (const r of [dlRes, baseRes]) {
    console.log(
      `    ${r.name.padEnd(20)} ${opened} median ${r.initMedian.toFixed(1).padStart(6)} ms  p90 ${r.initP90.toFixed(1).padStart(6)} ms   RSS median ${mb(r.rssMedian)} MB (anon ${mb(r.anonMedian)}, file ${mb(r.fileMedian)})`,
    );
  }
  const t = dlRes.initMedian / baseRes.initMedian;
  const m = dlRes.rssMedian / baseRes.rssMedian;
  const aim = (x: number) => (x <= AIM_RATIO ? "met" : "missed");
  console.log(
    `    ratio dl / v2 one-tool server: ${opened} ${t.toFixed(2)}x (aim <= ${AIM_RATIO}: ${aim(t)}), RSS ${m.toFixed(2)}x (aim <= ${AIM_RATIO}: ${aim(m)})`,
  );
}
for (const [label, extra] of [
  ["default configuration", {}],
  ["all tools (DELEGATE_TOOLS=all)", { DELEGATE_TOOLS: "all" }],
] as const) {
  const { tools, tokens } = await listTokens(extra);
  console.log(
    `  tools/list, ${label}: ${tools} tools, ${tokens} tokens (chars/4 of name + description + input schema; aim < ${AIM_TOKENS} by default)`,
  );
}
