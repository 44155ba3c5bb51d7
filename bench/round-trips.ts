/**
 * bench/round-trips — what a delegation costs the orchestrator when its host runs calls
 * as MCP tasks (interactive Claude Code), through the real `dist/dl serve` on the
 * 2026-07-28 protocol with the ext-tasks requester, against a scripted fake model.
 *
 * A quick delegation (the model answers at once) and a slow one (it answers after
 * SLOW_MS), each run RUNS times, with the default threshold (DELEGATE_TASK_INLINE_S=3:
 * a call whose jobs end within 3 s answers in place) and with every call a task (0, the
 * behaviour before). Printed per delegation: the orchestrator's turns (a result read in
 * the call's own turn is 1; a task is 2: its handle, then the completion it is told of),
 * the JSON-RPC requests the client sent (tools/call, tasks/get), and the time to the
 * result. Aim (issue 32): a quick delegation costs 1 turn, against 2 as a task.
 *
 *   bun build.ts && bun bench/round-trips.ts [runs=5]
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { reply, startFakeModel } from "../test/fixture/fake-model.ts";
import { connectTaskDl } from "../test/helpers/task-session.ts";
import { dlRunHome } from "./fixture/dl-run-home.ts";

const RUNS = Number(process.argv[2] ?? 5);
const SLOW_MS = 4500;
const { base, home } = dlRunHome("round-trips", { name: "helper", prompt: "Help." });
const repo = join(base, "repo");
mkdirSync(repo);
writeFileSync(join(repo, "README"), "bench\n");
const fake = await startFakeModel();

type Figures = { turns: number; requests: number; ms: number; tasks: number };

/** One delegation through one server: its kind, the requests it took, the time to its result. */
async function delegation(threshold: string, delayMs: number): Promise<Figures> {
  fake.reset();
  fake.always(reply.text("done", { delayMs }));
  const s = await connectTaskDl({
    HOME: home,
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_CACHE_DIR: join(base, "cache"),
    DELEGATE_AGENT_STATE_DIR: join(base, `agent-${threshold}`),
    DELEGATE_TASK_INLINE_S: threshold,
  });
  try {
    const before = new Map(s.io.sent);
    const t0 = performance.now();
    const execution = await s.session.callTool("delegate_to_local_agent", {
      agent_name: "helper",
      task: "answer",
      workdir: repo,
      model: "local-bench",
    });
    const { outcome } = await (execution as never as { settle: () => Promise<{ outcome: never }> }).settle();
    const result = resultFromTaskOutcome(outcome) as { structuredContent?: { success?: boolean } };
    if (!result.structuredContent?.success) throw new Error(`the delegation failed: ${JSON.stringify(result)}`);
    const ms = performance.now() - t0;
    const count = (m: string) => (s.io.sent.get(m) ?? 0) - (before.get(m) ?? 0);
    const isTask = execution.kind === "task";
    return { turns: isTask ? 2 : 1, requests: count("tools/call") + count("tasks/get"), ms, tasks: isTask ? 1 : 0 };
  } finally {
    await s.close();
  }
}

async function measure(threshold: string, delayMs: number): Promise<Figures> {
  const all: Figures[] = [];
  for (let i = 0; i < RUNS; i++) all.push(await delegation(threshold, delayMs));
  const mean = (f: (x: Figures) => number) => all.reduce((a, x) => a + f(x), 0) / all.length;
  return {
    turns: mean((x) => x.turns),
    requests: mean((x) => x.requests),
    ms: mean((x) => x.ms),
    tasks: mean((x) => x.tasks),
  };
}

try {
  const rows: [string, string, Figures][] = [];
  for (const [call, delay] of [
    ["quick", 0],
    ["slow", SLOW_MS],
  ] as const) {
    for (const [how, threshold] of [
      ["inline ≤ 3 s (default)", "3"],
      ["always a task (before)", "0"],
    ] as const) {
      rows.push([call, how, await measure(threshold, delay)]);
    }
  }
  console.log(`bench/round-trips: delegate_to_local_agent as an MCP task-declaring host calls it, ${RUNS} runs each`);
  console.log("call   how                      turns/delegation  requests/delegation  became a task  ms to result");
  for (const [call, how, f] of rows) {
    console.log(
      `${call.padEnd(6)} ${how.padEnd(24)} ${f.turns.toFixed(2).padStart(16)}  ${f.requests.toFixed(2).padStart(19)}  ${`${Math.round(f.tasks * 100)} %`.padStart(13)}  ${Math.round(f.ms).toString().padStart(12)}`,
    );
  }
  const q = rows.filter(([c]) => c === "quick").map(([, , f]) => f);
  const sl = rows.filter(([c]) => c === "slow").map(([, , f]) => f);
  console.log(
    `quick: ${q[0]!.turns.toFixed(2)} turns against ${q[1]!.turns.toFixed(2)} (${(q[0]!.turns / q[1]!.turns).toFixed(2)}x), ${q[0]!.requests.toFixed(2)} requests against ${q[1]!.requests.toFixed(2)} (${(q[0]!.requests / q[1]!.requests).toFixed(2)}x)`,
  );
  console.log(
    `slow:  ${sl[0]!.turns.toFixed(2)} turns against ${sl[1]!.turns.toFixed(2)} (${(sl[0]!.turns / sl[1]!.turns).toFixed(2)}x), ${sl[0]!.requests.toFixed(2)} requests against ${sl[1]!.requests.toFixed(2)} (${(sl[0]!.requests / sl[1]!.requests).toFixed(2)}x)`,
  );
} finally {
  await fake.stop();
  rmSync(base, { recursive: true, force: true });
}
