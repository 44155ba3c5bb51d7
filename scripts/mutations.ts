/**
 * Guard-removal mutation check: `npm run mutations [-- --sample | --only id,id | --list]`.
 *
 * Copies the tree (src, test, scripts, build files; node_modules symlinked) to a temp folder, then
 * for each mutation of scripts/mutation-list.ts: applies its one text replacement, builds
 * dist/dl when its tests drive the binary, runs only its test files, and restores the
 * file. A mutation is caught when those tests fail. Before any mutation, the same test
 * files run once on the unmodified copy: a test that already fails would make every
 * mutation look caught.
 *
 * Exit 0 when every mutation was caught; 1 when one survived; 2 when the list itself is
 * broken (a search string not found exactly once, a test file missing).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MUTATIONS, type Mutation } from "./mutation-list.ts";

const ROOT = resolve(import.meta.dir, "..");
const COPY = [
  "src",
  "test",
  "examples",
  "scripts",
  "docs",
  "build.ts",
  "package.json",
  "bunfig.toml",
  "tsconfig.json",
  "install.sh",
  "LICENSE",
  // The plugin (examples/agents links to its agents), its marketplace and server.json.
  "plugin",
  ".claude-plugin",
  "server.json",
];
/** One mutation's tests must finish within this (a hang counts as caught, but is reported). */
const PER_MUTATION_MS = 240_000;

/** Problems with the list: each entry's search occurs exactly once, its tests exist. */
export function listProblems(root: string, list: readonly Mutation[]): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const m of list) {
    if (ids.has(m.id)) problems.push(`${m.id}: duplicate id`);
    ids.add(m.id);
    const path = join(root, m.file);
    if (!existsSync(path)) {
      problems.push(`${m.id}: ${m.file} does not exist`);
      continue;
    }
    const n = readFileSync(path, "utf8").split(m.search).length - 1;
    if (n !== 1) problems.push(`${m.id}: search string found ${n} times in ${m.file} (must be exactly once)`);
    if (m.search === m.replace) problems.push(`${m.id}: replace equals search`);
    if (m.tests.length === 0) problems.push(`${m.id}: no test files`);
    for (const t of m.tests) if (!existsSync(join(root, t))) problems.push(`${m.id}: test file ${t} does not exist`);
  }
  return problems;
}

function parseArgs(argv: string[]): { pick: Mutation[]; listOnly: boolean } {
  let pick = MUTATIONS;
  let listOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--sample") pick = MUTATIONS.filter((m) => m.ci);
    else if (a === "--list") listOnly = true;
    else if (a === "--only") {
      const ids = new Set((argv[++i] ?? "").split(",").filter(Boolean));
      const unknown = [...ids].filter((id) => !MUTATIONS.some((m) => m.id === id));
      if (unknown.length) fail(`unknown mutation ids: ${unknown.join(", ")}`);
      pick = MUTATIONS.filter((m) => ids.has(m.id));
    } else fail(`unknown argument ${a}; expected --sample, --only id[,id…] or --list`);
  }
  return { pick, listOnly };
}

function fail(msg: string): never {
  console.error(`mutations: ${msg}`);
  process.exit(2);
}

function makeCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "dl-mutations-"));
  for (const name of COPY) cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

function run(cmd: string[], cwd: string, timeoutMs: number): { code: number | null; out: string; ms: number } {
  const t0 = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd,
    encoding: "utf8",
    timeout: timeoutMs,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}` },
  });
  return { code: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}`, ms: performance.now() - t0 };
}

const bunTest = (files: string[]) => ["bun", "test", "--timeout", "60000", "--bail", ...files];

function main(): void {
  const { pick, listOnly } = parseArgs(process.argv.slice(2));
  const problems = listProblems(ROOT, MUTATIONS);
  if (problems.length) fail(`the mutation list is out of date:\n  ${problems.join("\n  ")}`);
  if (listOnly) {
    for (const m of pick) console.log(`${m.id.padEnd(28)} ${m.file}  — ${m.guard}`);
    return;
  }
  const dir = makeCopy();
  const t0 = performance.now();
  try {
    // Every copy gets a pristine dist/dl (a test file may drive it even when the mutated
    // file is not in it); a mutation that rebuilt it gets the pristine one back after.
    if (run(["bun", "build.ts"], dir, 120_000).code !== 0) fail("the unmodified tree does not build");
    const bin = join(dir, "dist", "dl");
    cpSync(bin, `${bin}.pristine`);
    const files = [...new Set(pick.flatMap((m) => m.tests))];
    const base = run(bunTest(files), dir, PER_MUTATION_MS * 2);
    if (base.code !== 0) fail(`the targeted tests fail without any mutation:\n${base.out.slice(-4000)}`);
    console.log(`baseline: ${files.length} test files pass unmodified (${(base.ms / 1000).toFixed(1)} s)`);
    const survivors: Mutation[] = [];
    for (const m of pick) {
      const path = join(dir, m.file);
      const original = readFileSync(path, "utf8");
      writeFileSync(
        path,
        original.replace(m.search, () => m.replace),
      );
      try {
        const built = m.build ? run(["bun", "build.ts"], dir, 120_000) : undefined;
        const buildFailed = built !== undefined && built.code !== 0;
        const r = buildFailed ? built : run(bunTest(m.tests), dir, PER_MUTATION_MS);
        const caught = r.code !== 0;
        const how = buildFailed
          ? "caught (no build)"
          : r.code === null
            ? "caught (timed out)"
            : caught
              ? "caught"
              : "SURVIVED";
        console.log(`${how.padEnd(18)} ${m.id.padEnd(28)} ${(r.ms / 1000).toFixed(1)} s`);
        if (!caught) survivors.push(m);
      } finally {
        writeFileSync(path, original);
        if (m.build) {
          // A test's orphan may still run the mutated binary (ETXTBSY on overwrite): rename over it.
          cpSync(`${bin}.pristine`, `${bin}.next`);
          renameSync(`${bin}.next`, bin);
        }
      }
    }
    const secs = ((performance.now() - t0) / 1000).toFixed(0);
    console.log(`\nmutations: ${pick.length - survivors.length}/${pick.length} caught in ${secs} s`);
    for (const m of survivors) console.log(`  survived: ${m.id} (${m.file}): ${m.guard} — no test fails without it`);
    if (survivors.length) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) main();
