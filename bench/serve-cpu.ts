/**
 * bench/serve-cpu — the CPU (user + system, from the kernel's rusage of the exited
 * process) one `dl serve` session costs, per kind of session: `initialize` + `tools/list`
 * with every backend's tools (DELEGATE_TOOLS=all), the same with the default tools, a
 * server whose stdin closes at once, and `dl --version` (the floor: the runtime and the
 * CLI's entry). Each binary named is run in turn, session by session, so the machine's
 * load falls on all of them alike: compare the ratios against the first binary (the
 * baseline), not the milliseconds.
 *
 *   npm run build && bun bench/serve-cpu.ts [runs=20] [baseline binary] [more binaries…]
 *
 * With no binary named it measures dist/dl alone; e.g. keep a copy of an older build:
 *   cp dist/dl /tmp/dl-old && …change, npm run build… && bun bench/serve-cpu.ts 20 /tmp/dl-old dist/dl
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const RUNS = Number(process.argv[2] ?? 20);
const root = resolve(import.meta.dir, "..");
const named = process.argv.slice(3).map((b) => resolve(b));
const binaries = named.length > 0 ? named : [join(root, "dist", "dl")];
for (const b of binaries)
  if (!existsSync(b)) {
    console.error(`${b} is missing (dist/dl: run \`npm run build\` first)`);
    process.exit(2);
  }

const home = mkdtempSync(join(tmpdir(), "dl-bench-cpu-"));
const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DELEGATE_LOG_LEVEL: "warn" };
const line = (m: object) => `${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`;
const frames =
  line({
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  }) +
  line({ method: "notifications/initialized" }) +
  line({ id: 2, method: "tools/list" });

type Session = { name: string; args: string[]; env: Record<string, string>; stdin: string };
const sessions: Session[] = [
  { name: "serve initialize+tools/list (all tools)", args: ["serve"], env: { DELEGATE_TOOLS: "all" }, stdin: frames },
  { name: "serve initialize+tools/list (default)", args: ["serve"], env: {}, stdin: frames },
  { name: "serve, stdin closed at once", args: ["serve"], env: {}, stdin: "" },
  { name: "dl --version", args: ["--version"], env: {}, stdin: "" },
];

/**
 * Where CPU is counted: a cgroup-v1 cpuacct group per binary when this user may make one
 * (Linux, root: every process the session starts, a git child too, as
 * scripts/test-cpu.sh counts), else the kernel's rusage of the exited process (its
 * children that it waited for included).
 */
const CGROUP_ROOT = "/sys/fs/cgroup/cpuacct";
const useCgroup = existsSync(CGROUP_ROOT) && accessible(CGROUP_ROOT);
function accessible(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
const groups = new Map<string, string>();
function groupOf(bin: string): string {
  let g = groups.get(bin);
  if (!g) {
    g = join(CGROUP_ROOT, `dl-bench-serve-cpu.${process.pid}.${groups.size}`);
    mkdirSync(g);
    groups.set(bin, g);
  }
  return g;
}
process.on("exit", () => {
  for (const g of groups.values()) rmdirSync(g);
});

/** CPU milliseconds of one run: all requests written at once, then stdin closed (answers still come). */
async function cpuOf(bin: string, s: Session): Promise<number> {
  const g = useCgroup ? groupOf(bin) : "";
  if (g) writeFileSync(join(g, "cpuacct.usage"), "0");
  const argv = g ? ["sh", "-c", `echo $$ > ${g}/cgroup.procs && exec "$0" "$@"`, bin, ...s.args] : [bin, ...s.args];
  const p = Bun.spawn(argv, {
    env: { ...baseEnv, ...s.env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    cwd: home,
  });
  p.stdin.write(s.stdin);
  p.stdin.end();
  const out = await new Response(p.stdout).text();
  await p.exited;
  if (s.stdin && !out.includes('"id":2')) throw new Error(`${bin} ${s.args.join(" ")}: no tools/list answer`);
  if (g) {
    // A child the session started may outlive it by a moment.
    for (let i = 0; i < 200 && readFileSync(join(g, "cgroup.procs"), "utf8").trim() !== ""; i++) await Bun.sleep(5);
    return Number(readFileSync(join(g, "cpuacct.usage"), "utf8")) / 1e6;
  }
  const cpu = p.resourceUsage()?.cpuTime;
  if (!cpu) throw new Error("no resource usage for the exited process");
  return Number(cpu.user + cpu.system) / 1000;
}

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};

console.log(
  `bench/serve-cpu: ${RUNS} runs each, CPU per session (${useCgroup ? "cgroup cpuacct: every process it started" : "rusage of the process"}), median (mean)`,
);
for (const b of binaries) console.log(`  ${b === binaries[0] ? "baseline" : "        "} ${b}`);
for (const s of sessions) {
  const cpu = binaries.map(() => [] as number[]);
  for (const [i, b] of binaries.entries()) await cpuOf(b, s).then((ms) => cpu[i]!.push(ms)); // warm the page cache
  for (let r = 0; r < RUNS; r++) for (const [i, b] of binaries.entries()) cpu[i]!.push(await cpuOf(b, s));
  for (const xs of cpu) xs.shift();
  const base = median(cpu[0]!);
  const cells = cpu.map((xs, i) => {
    const m = median(xs);
    const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
    const ratio = i === 0 ? "" : `  ${(m / base).toFixed(2)}x`;
    return `${m.toFixed(1).padStart(6)} ms (${mean.toFixed(1)})${ratio}`;
  });
  console.log(`  ${s.name.padEnd(42)} ${cells.join("   ")}`);
}
