/**
 * bench/followup — what a follow-up reuses of the conversation it continues, through the
 * real `dist/dl run` against a scripted Anthropic-format fake on 127.0.0.1.
 *
 * A 10-turn delegation (9 read_file turns of ~8 KB files, then a text reply), then a
 * follow-up of 5 turns (`--continue-from` its conversation_id: 4 tool turns, then text).
 * Beside it, in this same run, the way without follow-ups: a fresh delegation of the
 * same follow-up task, which must read the 9 files again before its own 5 turns.
 *
 * A prefix cache (counted as bench/prefix counts it, fixture/prefix-cache.ts) that just
 * served the earlier conversation's last request skips, of the next request, the parts
 * identical to it. Printed: the share of the earlier conversation the first request of
 * each way reuses, and the bytes each way prefills in all.
 *
 * Aim (issue 24): the follow-up's first request reuses >= 95 % of the earlier conversation.
 *
 *   bun build.ts && bun bench/followup.ts
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, reply, startFakeModel } from "../test/fixture/fake-model.ts";
import { dlRunHome } from "./fixture/dl-run-home.ts";
import { measure, parts, reusedBytes, totalBytes } from "./fixture/prefix-cache.ts";

const READS = 9;
const FOLLOW_TOOLS = 4;
const MODEL = "glm-bench";

const { dl, base, home } = dlRunHome("followup", { name: "worker", prompt: "Do the task." });
const repo = join(base, "repo");
mkdirSync(repo);
for (let i = 0; i < READS; i++) {
  const lines = Array.from({ length: 200 }, (_, n) => `// module ${i} line ${n} `.padEnd(38, "x"));
  writeFileSync(join(repo, `m${i}.ts`), `${lines.join("\n")}\n`);
}

const fake = await startFakeModel();
try {
  fake.reset();
  for (let i = 0; i < READS; i++) fake.script(reply.tool("read_file", { path: `m${i}.ts` }));
  fake.script(reply.text("Read the nine modules."));
  const first = await runDl(["read the nine modules"]);
  const earlier = [...fake.requests];
  const id = first.conversation_id;
  if (!id) throw new Error("the first run returned no conversation_id");

  fake.reset();
  scriptFollowUp();
  await runDl(["now list what they export", "--continue-from", id]);
  const followUp = [...fake.requests];

  fake.reset();
  for (let i = 0; i < READS; i++) fake.script(reply.tool("read_file", { path: `m${i}.ts` }));
  scriptFollowUp();
  await runDl(["read the nine modules, then list what they export"]);
  const fresh = [...fake.requests];

  report(earlier, followUp, fresh);
} finally {
  await fake.stop();
  rmSync(base, { recursive: true, force: true });
}

function scriptFollowUp(): void {
  for (let i = 0; i < FOLLOW_TOOLS; i++) fake.script(reply.tool("search_files", { pattern: `module ${i} line 1\\b` }));
  fake.script(reply.text("They export nothing."));
}

async function runDl(args: string[]): Promise<{ conversation_id?: string }> {
  const [task, ...rest] = args;
  const proc = Bun.spawn([dl, "run", "worker", task!, "--workdir", repo, "--model", MODEL, "--json", ...rest], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, DELEGATE_LOCAL_URL: fake.anthropicUrl },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`dl run exited ${code}: ${err.slice(-2000)}`);
  return JSON.parse(out) as { conversation_id?: string };
}

function report(earlier: RecordedRequest[], followUp: RecordedRequest[], fresh: RecordedRequest[]): void {
  const last = parts(earlier.at(-1)!.body);
  const whole = totalBytes(last);
  const share = (next: RecordedRequest) => reusedBytes(last, parts(next.body)) / whole;
  // Each way's requests as the cache sees them right after the earlier conversation.
  const cost = (reqs: RecordedRequest[]) => {
    const all = measure([earlier.at(-1)!, ...reqs]);
    return all.prefill - totalBytes(last);
  };
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
  const f = { reuse: share(followUp[0]!), prefill: cost(followUp), requests: followUp.length };
  const s = { reuse: share(fresh[0]!), prefill: cost(fresh), requests: fresh.length };
  console.log(
    `bench/followup — a ${earlier.length}-turn delegation (${(whole / 1024).toFixed(0)} KB), then 5 more turns (${MODEL})`,
  );
  console.log("way                 requests  first request reuses  prefilled in all");
  console.log(
    `follow-up           ${String(f.requests).padStart(8)}  ${`${(100 * f.reuse).toFixed(1)} %`.padStart(20)}  ${kb(f.prefill)}`,
  );
  console.log(
    `fresh delegation    ${String(s.requests).padStart(8)}  ${`${(100 * s.reuse).toFixed(1)} %`.padStart(20)}  ${kb(s.prefill)}`,
  );
  const ok = f.reuse >= 0.95;
  console.log(
    `aim: the follow-up's first request reuses >= 95 % of the earlier conversation: ${(100 * f.reuse).toFixed(1)} % ${ok ? "met" : "MISSED"}`,
  );
  console.log(`follow-up vs fresh: ${(s.prefill / f.prefill).toFixed(1)}x fewer bytes prefilled`);
  if (!ok) process.exitCode = 1;
}
