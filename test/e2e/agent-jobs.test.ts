import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { connectInProcess, type InProcessSession } from "../helpers/in-process.ts";
import { pidAlive } from "../helpers/proc.ts";
import { childRecorded, supervisorOf } from "../helpers/supervisor.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Background agent jobs through the product: the compiled `dl serve`, the SDK's Client,
 * each job a child `dl run --json` against the scripted fake model, and `dl wait` as the
 * completion signal. The fake counts requests in flight, so the pool bound is measured
 * where it matters: at the backend.
 */
const KEY = "sk-agent-jobs-secret";
const MODEL = "local-jobs-model";

type JobView = {
  id: string;
  status: string;
  queue_reason: string | null;
  agent_name: string | null;
  success: boolean | null;
  final_response: string | null;
  failure_kind: string | null;
  turns: number | null;
  bash_calls: number | null;
  bash_failures: number | null;
  last_bash_exit: number | null;
  usage: { input_tokens: number; output_tokens: number } | null;
  model_used: string | null;
  failed_over_from: string | null;
  progress?: { turn: number; max_turns: number; last_action: string };
  owner: { pid: number | null; alive: boolean };
};
type Submitted = { jobs: { id: string }[]; watch: string; watch_hint: string };

let fake: FakeModel;
let root: string;
let agentsDir: string;
const sessions: (DlSession | InProcessSession)[] = [];

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("agent-jobs");
  agentsDir = tempDir("agent-jobs-agents");
  writeFileSync(
    join(agentsDir, "helper.md"),
    "---\nname: helper\ndescription: helper\n---\nYou are a careful helper.\n",
  );
});
// A test's servers end with it: an idle server still ticks its engines.
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close().catch(() => undefined)));
});
afterAll(async () => {
  await (await mainServer)?.close().catch(() => undefined);
  await fake?.stop();
});
beforeEach(() => fake.reset());

function env(stateDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_AGENT_STATE_DIR: stateDir,
    ...extra,
  };
}

async function serve(stateDir: string, extra: Record<string, string> = {}): Promise<DlSession> {
  const s = await connectDl(env(stateDir, extra));
  sessions.push(s);
  return s;
}

/**
 * The server of the tests that need nothing of their own (default caps, a server that
 * stays up): started by the first, it ends with the file. Each test works in repos of its
 * own, and its jobs have ended when it does.
 */
let mainServer: Promise<DlSession> | undefined;
function main(): Promise<DlSession> {
  mainServer ??= connectDl(env(join(root, "state-main")));
  return mainServer;
}

const call = callTool;

/** Whether the request already carries a tool result (the agent's second turn). */
function afterTool(req: RecordedRequest): boolean {
  return JSON.stringify(req.body.messages ?? []).includes("tool_result");
}

/** Turn 1: run a command that exits 3 (slowly, so runs overlap); turn 2: the answer. */
function scriptBashThenAnswer(delayMs = 400, before: () => Promise<void> = async () => {}): void {
  fake.always(async (req) => {
    await before();
    return afterTool(req)
      ? reply.text("Ran the check; it exited 3.", { delayMs })
      : reply.tool("run_bash", { command: "echo checking; exit 3" }, { delayMs });
  });
}

const agentTask = (workdir: string, extra: Record<string, unknown> = {}) => ({
  agent_name: "helper",
  task: "Run the check and report.",
  workdir,
  model: MODEL,
  ...extra,
});

async function poll(s: DlSession, ids: string[]): Promise<JobView[]> {
  return (await call<{ jobs: JobView[] }>(s, "poll_agent", { ids })).data.jobs;
}

async function pollUntilEnded(s: DlSession, ids: string[], ms = 60_000): Promise<JobView[]> {
  return until(
    async () => {
      const jobs = await poll(s, ids);
      return jobs.every((j) => !["queued", "running"].includes(j.status)) ? jobs : null;
    },
    `jobs ${ids.join(" ")} to end`,
    ms,
  );
}

describe("submit_agent / poll_agent / cancel_agent through dist/dl serve", () => {
  test("4 tasks over 2 worktrees: the backend sees at most 2, all done with last_bash_exit measured, watch exits 0", async () => {
    const stateDir = join(root, "state-main");
    const s = await main();
    // 1 s a reply: the state polled for below (turn 1, waiting for the model's second
    // reply) lasts about that long, long enough to be seen on a loaded machine.
    scriptBashThenAnswer(1000);
    const { trees } = makeRepo(root, "main", 2);
    const tasks = [0, 1, 2, 3].map((i) => agentTask(trees[1 + (i % 2)]!));
    const sub = await call<Submitted>(s, "submit_agent", { tasks });
    expect(sub.isError).toBeFalsy();
    const ids = sub.data.jobs.map((j) => j.id);
    expect(ids.every((id) => /^ag-[0-9a-f]+$/.test(id))).toBe(true);
    expect(sub.data.watch).toBe(`${requireBinary()} wait ${ids.join(" ")}`);
    expect(sub.data.watch_hint).toContain("background");

    // While they run, poll shows turn n of max and the last action.
    const running = await until(
      async () => (await poll(s, ids)).find((j) => j.status === "running" && j.progress?.turn === 1) ?? null,
      "a running job to report its first turn",
    );
    expect(running.progress!.max_turns).toBeGreaterThan(1);
    expect(running.progress!.last_action).toContain("run_bash");

    const watcher = Bun.spawn(sub.data.watch.split(" "), {
      env: testEnv({ DELEGATE_AGENT_STATE_DIR: stateDir }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(watcher.stdout).text(), watcher.exited]);
    const jobs = await pollUntilEnded(s, ids);
    console.log(`agent jobs e2e: 4 jobs over 2 worktrees, backend peak ${fake.peak()} (pool 2)`);
    expect(code).toBe(0);
    expect(out.trim().split("\n")).toHaveLength(4);
    expect(fake.peak()).toBeLessThanOrEqual(2);
    expect(fake.peak()).toBeGreaterThanOrEqual(1);
    for (const j of jobs) {
      expect(j.status).toBe("done");
      expect(j.success).toBe(true);
      expect(j.agent_name).toBe("helper");
      expect(j.final_response).toBe("Ran the check; it exited 3.");
      expect(j.turns).toBe(2);
      expect(j.bash_calls).toBe(1);
      expect(j.bash_failures).toBe(1);
      expect(j.last_bash_exit).toBe(3);
      expect(j.model_used).toBe(MODEL);
      expect(j.usage!.output_tokens).toBeGreaterThan(0);
      // The task went through a private file, never argv.
      const taskFile = join(stateDir, "jobs", j.id, "task.md");
      expect(readFileSync(taskFile, "utf8")).toBe("Run the check and report.");
      expect(statSync(taskFile).mode & 0o777).toBe(0o600);
    }
  }, 60_000);

  test("4 repos: the job caps allow 4, the model's pool still holds the backend to 2", async () => {
    const s = await main();
    // Each answer waits until two requests are in flight at once, then all go: the pool
    // must let two through together (or this never ends), and the peak says whether it let more.
    let twoInFlight = () => {};
    const two = new Promise<void>((resolve) => {
      twoInFlight = resolve;
    });
    scriptBashThenAnswer(50, async () => {
      if (fake.inFlight() >= 2) twoInFlight();
      await two;
    });
    const repos = [0, 1, 2, 3].map((i) => makeRepo(root, `pool-${i}`, 0).repo);
    const sub = await call<Submitted>(s, "submit_agent", { tasks: repos.map((r) => agentTask(r)) });
    const jobs = await pollUntilEnded(
      s,
      sub.data.jobs.map((j) => j.id),
    );
    console.log(`agent jobs e2e: 4 jobs over 4 repos, backend peak ${fake.peak()} (pool 2)`);
    expect(jobs.map((j) => j.status)).toEqual(["done", "done", "done", "done"]);
    expect(fake.peak()).toBe(2);
  }, 60_000);

  test("an invalid task refuses the whole call and nothing is queued", async () => {
    const stateDir = join(root, "state-bad");
    // What the tool answers: in this process (helpers/in-process.ts), nothing is started.
    const s = await connectInProcess(env(stateDir));
    sessions.push(s);
    const repo = makeRepo(root, "bad", 0).repo;
    const r = await call(s, "submit_agent", { tasks: [agentTask(repo), agentTask(repo, { max_turns: 99 })] });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/max_turns|40/);
    const flag = await call(s, "submit_agent", { tasks: [agentTask(repo, { agent_name: "--json" })] });
    expect(flag.isError).toBe(true);
    expect(flag.text).toContain("nothing was started");
    // An agent no place has is refused at submit, as delegate_to_local_agent refuses it,
    // not queued to fail in its child.
    const missing = await call(s, "submit_agent", {
      tasks: [agentTask(repo), agentTask(repo, { agent_name: "nope" })],
    });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain("task 2: agent 'nope' not found");
    expect(missing.text).toContain("nothing was started");
    const store = JobStore.open(stateDir, { readonly: true });
    try {
      expect(store.listRecent(10)).toEqual([]);
    } finally {
      store.close();
    }
  }, 60_000);

  test("cancel of a queued and of a running job", async () => {
    const s = await main();
    fake.always(reply.hang());
    const repo = makeRepo(root, "cancel", 0).repo;
    // One worktree: the second job waits behind the first.
    const sub = await call<Submitted>(s, "submit_agent", { tasks: [agentTask(repo), agentTask(repo)] });
    const [first, second] = sub.data.jobs.map((j) => j.id) as [string, string];
    await until(async () => fake.inFlight() === 1, "the first agent to reach the backend");
    // The second job's queue reason is written by its own admission pass, which may come a moment later.
    const [a, b] = await until(async () => {
      const views = await poll(s, [first, second]);
      return views[1]?.queue_reason ? views : null;
    }, "the second job to say why it waits");
    expect(a!.status).toBe("running");
    expect(b!.status).toBe("queued");
    expect(b!.queue_reason).toBe("workspace_busy");

    const c2 = await call<{ status: string }>(s, "cancel_agent", { id: second });
    expect(c2.isError).toBeFalsy();
    const c1 = await call<{ status: string }>(s, "cancel_agent", { id: first });
    expect(c1.isError).toBeFalsy();
    const ended = await pollUntilEnded(s, [first, second]);
    expect(ended.map((j) => j.status)).toEqual(["cancelled", "cancelled"]);
    // The child's request was dropped: its loop ended with its process.
    await until(async () => fake.inFlight() === 0, "the cancelled agent's request to close");
  }, 60_000);

  test("SIGKILL of the job's supervisor: the next start ends the orphaned job killed_on_restart", async () => {
    const stateDir = join(root, "state-dead");
    const s = await serve(stateDir);
    fake.always(reply.hang());
    const repo = makeRepo(root, "dead", 0).repo;
    const sub = await call<Submitted>(s, "submit_agent", { tasks: [agentTask(repo)] });
    const id = sub.data.jobs[0]!.id;
    await until(async () => fake.inFlight() === 1, "the agent to reach the backend");
    await childRecorded(stateDir, id);
    const supervisor = supervisorOf(stateDir, id);
    expect(supervisor).not.toBe(s.transport.pid);
    process.kill(supervisor, "SIGKILL");
    await until(() => !pidAlive(supervisor), "the supervisor to die");

    const next = await serve(stateDir);
    const [job] = await pollUntilEnded(next, [id]);
    expect(job!.status).toBe("killed_on_restart");
    await until(async () => fake.inFlight() === 0, "the orphaned agent's request to close");
    const wait = await runDl(["wait", id], { DELEGATE_AGENT_STATE_DIR: stateDir });
    expect(wait.stdout).toContain(id);
    expect(existsSync(join(stateDir, "jobs", id, "task.md"))).toBe(true);
    // What a local user could read in argv: the task file and flags, no task text, no key.
    const store = JobStore.open(stateDir);
    try {
      const cmd = store.get(id)!.child_cmd ?? "";
      expect(cmd).toContain("--task-file");
      expect(cmd).not.toContain("Run the check");
      expect(cmd).not.toContain(KEY);
    } finally {
      store.close();
    }
  }, 60_000);
});
