/**
 * bench/prefix — how much of each request a prefix cache (llama.cpp, vLLM, Anthropic) can
 * skip, through the real `dist/dl run` against a scripted Anthropic-format fake on
 * 127.0.0.1. A prefix cache only skips the bytes identical to the request it has just
 * seen, so for every request the backend must prefill everything from the first part
 * (system, tools, message 1, message 2 …) that differs from the previous request onward.
 *
 * One session: 30 turns, each a read_file of a different ~27 KB file, then a text reply.
 * It runs three times in this one run, side by side:
 *   - per-turn   today's policy before this change: the newest 6 results whole, the next
 *                older one stubbed on every turn (DELEGATE_CONTEXT_BUDGET=1, KEEP=6);
 *   - none       no pruning at all (the budget never reached);
 *   - budget     the default: nothing stubbed until DELEGATE_CONTEXT_BUDGET, then a batch.
 * For each: bytes prefilled, bytes the backend sees for the first time ("novel"), their
 * ratio, the peak request, and prefix breaks (requests that changed an earlier part).
 * Then the share of the system prompt one agent keeps across two worktrees and two models.
 *
 * Aims (issue 13): prefilled <= 1.5 x novel with the peak under 60 % of no pruning's;
 * >= 95 % shared system prompt.
 *
 *   bun build.ts && bun bench/prefix.ts
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type RecordedRequest, reply, startFakeModel } from "../test/fixture/fake-model.ts";
import { measure, textOf } from "./fixture/prefix-cache.ts";

const TURNS = 30;
const LINES_PER_FILE = 600; // 38-char lines + line numbers: one read_file result ≈ 27 KB
const MODEL = "glm-bench"; // an allowlisted prefix: the request carries cache_control breakpoints

const root = resolve(import.meta.dir, "..");
const dl = join(root, "dist", "dl");
if (!existsSync(dl)) {
  console.error("dist/dl is missing: run `bun build.ts` first");
  process.exit(2);
}

const base = realpathSync(mkdtempSync(join(tmpdir(), "dl-bench-prefix-")));
const home = join(base, "home");
mkdirSync(home);
const repo = join(base, "repo");
makeRepo(repo);

const fake = await startFakeModel();
try {
  const policies: [string, Record<string, string>][] = [
    ["per-turn", { DELEGATE_CONTEXT_BUDGET: "1", DELEGATE_KEEP_TOOL_RESULTS: "6" }],
    ["none", { DELEGATE_CONTEXT_BUDGET: "100000000" }],
    ["budget", {}],
  ];
  const rows = [];
  for (const [name, env] of policies) rows.push({ name, ...measure(await session(env)) });
  report(rows);
  await sharedPrompt();
} finally {
  await fake.stop();
  rmSync(base, { recursive: true, force: true });
}

/** A git repo with the files to read and the agent, plus a linked worktree of it. */
function makeRepo(dir: string): void {
  mkdirSync(join(dir, "src"), { recursive: true });
  for (let i = 0; i < TURNS; i++) {
    const lines = Array.from({ length: LINES_PER_FILE }, (_, n) => `// part ${i} line ${n} `.padEnd(38, "x"));
    writeFileSync(join(dir, "src", `part-${i}.ts`), `${lines.join("\n")}\n`);
  }
  mkdirSync(join(dir, ".claude", "agents"), { recursive: true });
  copyFileSync(join(root, "examples", "agents", "coder.md"), join(dir, ".claude", "agents", "coder.md"));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  git("-c", "user.email=b@x", "-c", "user.name=b", "add", "-A");
  git("-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "init");
  git("worktree", "add", "-q", join(base, "wt-b"));
}

async function runDl(workdir: string, model: string, maxTurns: number, env: Record<string, string>) {
  const proc = Bun.spawn(
    [dl, "run", "coder", "read the parts", "--workdir", workdir, "--model", model, "--max-turns", String(maxTurns)],
    {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DELEGATE_LOCAL_URL: fake.anthropicUrl, ...env },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`dl run exited ${code}: ${err.slice(-2000)}`);
}

/** One 30-turn session through dl run; returns the requests the backend received. */
async function session(env: Record<string, string>): Promise<RecordedRequest[]> {
  fake.reset();
  for (let i = 0; i < TURNS; i++) fake.script(reply.tool("read_file", { path: `src/part-${i}.ts` }));
  fake.script(reply.text("Read all parts; nothing to change."));
  await runDl(repo, MODEL, TURNS + 1, env);
  if (fake.requests.length !== TURNS + 1)
    throw new Error(`expected ${TURNS + 1} requests, got ${fake.requests.length}`);
  return [...fake.requests];
}

function report(rows: { name: string; prefill: number; novel: number; peak: number; breaks: number }[]): void {
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`.padStart(9);
  const none = rows.find((r) => r.name === "none")!;
  console.log(`bench/prefix — ${TURNS} read_file turns of ~27 KB through dist/dl run (Anthropic format, ${MODEL})`);
  console.log("policy      prefilled     novel  prefill/novel   peak request  peak/none  prefix breaks");
  for (const r of rows) {
    const ratio = (r.prefill / r.novel).toFixed(2).padStart(13);
    const peak = (r.peak / none.peak).toFixed(2).padStart(9);
    console.log(
      `${r.name.padEnd(10)} ${kb(r.prefill)} ${kb(r.novel)} ${ratio}   ${kb(r.peak)}    ${peak}  ${String(r.breaks).padStart(6)}/${TURNS}`,
    );
  }
  const b = rows.find((r) => r.name === "budget")!;
  const okPrefill = b.prefill <= 1.5 * b.novel;
  const okPeak = b.peak < 0.6 * none.peak;
  console.log(
    `aim: budget prefilled <= 1.5 x novel: ${(b.prefill / b.novel).toFixed(2)} ${okPrefill ? "met" : "MISSED"}; ` +
      `peak < 60 % of none: ${((100 * b.peak) / none.peak).toFixed(0)} % ${okPeak ? "met" : "MISSED"}`,
  );
  const before = rows.find((r) => r.name === "per-turn")!;
  console.log(`budget vs per-turn: ${(before.prefill / b.prefill).toFixed(2)}x fewer bytes prefilled`);
}

/** The same agent on the main checkout and a linked worktree, with two models: how much system prompt is shared. */
async function sharedPrompt(): Promise<void> {
  const systems: string[] = [];
  for (const [workdir, model] of [
    [repo, "local-qwen-3-6-35b"],
    [join(base, "wt-b"), "glm-5.2"],
  ] as const) {
    fake.reset();
    fake.script(reply.text("ok"));
    await runDl(workdir, model, 25, {});
    systems.push(textOf(fake.requests[0]!.body.system));
  }
  const [a, b] = systems as [string, string];
  let same = 0;
  while (same < a.length && a[same] === b[same]) same++;
  const share = same / Math.max(a.length, b.length);
  console.log(
    `shared system prompt (coder, two worktrees, two models): ${same} of ${Math.max(a.length, b.length)} chars = ` +
      `${(100 * share).toFixed(1)} % ${share >= 0.95 ? "met" : "MISSED"} (aim >= 95 %)`,
  );
}
