/**
 * bench/suite — the time of the whole `npm test` against an older commit's, on this
 * machine and in this run. Machines differ far more than the suite does (the same
 * commit took 85 s on one and 334 s on another), so a figure in seconds says little;
 * the ratio of two suites run in turn on one machine does.
 *
 *   bun bench/suite.ts <baseline commit> [rounds=1]
 *
 * The baseline is checked out into a worktree of its own and installed with `npm ci`;
 * the current suite runs from a clean clone of HEAD (what CI runs, so uncommitted edits
 * are not measured). Each round runs the baseline, then the current suite. CPU is each
 * run's cgroup-v1 cpuacct total (every process, detached supervisors included) where
 * that hierarchy is writable (Linux, root); elsewhere only wall time is printed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [ref, roundsArg = "1"] = process.argv.slice(2);
if (!ref) {
  console.error("usage: bun bench/suite.ts <baseline commit> [rounds=1]");
  process.exit(2);
}
const ROUNDS = Number(roundsArg);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`rounds must be a whole number of at least 1, not ${roundsArg}`);
  process.exit(2);
}
const repo = resolve(import.meta.dir, "..");
const CPUACCT = "/sys/fs/cgroup/cpuacct";

function sh(argv: string[], cwd: string): string {
  const r = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} (in ${cwd}): ${r.stderr.toString().trim()}`);
  return r.stdout.toString().trim();
}

/** A checkout of `commit` with its own node_modules, ready for `npm test`. */
function checkout(commit: string, into: string): string {
  sh(["git", "clone", "-q", "--no-checkout", repo, into], repo);
  sh(["git", "checkout", "-q", "--detach", commit], into);
  sh(["npm", "ci", "--no-audit", "--no-fund"], into);
  return sh(["git", "rev-parse", "--short", "HEAD"], into);
}

interface Run {
  wall: number;
  cpu: number | null;
  pass: number;
  fail: number;
  tests: number;
}

/** One `npm test` in `dir`, in a cpuacct group of its own when one can be made. */
async function npmTest(dir: string, tag: string): Promise<Run> {
  const cg = existsSync(CPUACCT) ? join(CPUACCT, `dl-bench-suite.${process.pid}.${tag}`) : null;
  let counted = false;
  if (cg)
    try {
      mkdirSync(cg);
      counted = true;
    } catch {
      // Not root, or no v1 hierarchy: wall time only.
    }
  const start = performance.now();
  // The shell joins the group first, so npm, bun and every process they start are counted.
  const join_ = counted ? `echo $$ > ${cg}/cgroup.procs && ` : "";
  const p = Bun.spawn(["sh", "-c", `${join_}exec npm test`], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  await p.exited;
  const wall = (performance.now() - start) / 1000;
  let cpu: number | null = null;
  if (counted && cg) {
    // Detached supervisors may outlive the run by a moment.
    for (let i = 0; i < 100 && readFileSync(join(cg, "cgroup.procs"), "utf8").trim() !== ""; i++) await Bun.sleep(100);
    cpu = Number(readFileSync(join(cg, "cpuacct.usage"), "utf8")) / 1e9;
    rmdirSync(cg);
  }
  const text = out + err;
  const num = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  return { wall, cpu, pass: num(/^ *(\d+) pass$/m), fail: num(/^ *(\d+) fail$/m), tests: num(/^Ran (\d+) tests/m) };
}

const show = (r: Run) =>
  `wall ${r.wall.toFixed(1)} s, cpu ${r.cpu === null ? "n/a" : `${r.cpu.toFixed(1)} s`}, ${r.tests} tests (${r.pass} pass, ${r.fail} fail)`;

const work = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "dl-bench-suite-"));
try {
  const base = checkout(ref, join(work, "baseline"));
  const head = checkout("HEAD", join(work, "current"));
  const runs: { base: Run; head: Run }[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    const b = await npmTest(join(work, "baseline"), `b${i}`);
    console.log(`round ${i} baseline ${base}: ${show(b)}`);
    const h = await npmTest(join(work, "current"), `h${i}`);
    console.log(`round ${i} current  ${head}: ${show(h)}`);
    runs.push({ base: b, head: h });
  }
  const sum = (f: (r: { base: Run; head: Run }) => number) => runs.reduce((s, r) => s + f(r), 0);
  const wallRatio = sum((r) => r.head.wall) / sum((r) => r.base.wall);
  const perTest = sum((r) => r.head.wall / r.head.tests) / sum((r) => r.base.wall / r.base.tests);
  console.log(`current/baseline: wall ${wallRatio.toFixed(2)}x, wall per test ${perTest.toFixed(2)}x`);
  if (runs.every((r) => r.base.cpu !== null && r.head.cpu !== null))
    console.log(`current/baseline: cpu ${(sum((r) => r.head.cpu!) / sum((r) => r.base.cpu!)).toFixed(2)}x`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
