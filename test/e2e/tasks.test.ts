import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { JobStore } from "../../src/store/jobs.ts";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { MODERN_META } from "../helpers/modern.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * MCP Tasks (the 2026-07-28 extension io.modelcontextprotocol/tasks) through the
 * compiled `dl serve`: the SDK's v2 Client on the 2026-07-28 protocol, the ext-tasks
 * requester declaring the extension, background agent jobs against the scripted fake
 * model. A task is its jobs in the store, so another server settles it.
 */
const KEY = "sk-tasks-secret";
const MODEL = "local-tasks-model";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] };
type JobView = { id: string; status: string; last_bash_exit: number | null; final_response: string | null };

let fake: FakeModel;
let root: string;
let agentsDir: string;
const open: { close: () => Promise<void> }[] = [];

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("tasks");
  agentsDir = tempDir("tasks-agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nYou help.\n");
});
// A test's servers end with it: an idle server still ticks its engines.
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
});
afterAll(async () => {
  await (await sharedDl)?.close().catch(() => undefined);
  await fake?.stop();
});
beforeEach(() => fake.reset());

/** Every call that can be a task is one (DELEGATE_TASK_INLINE_S=0) unless a test says otherwise. */
const env = (stateDir: string, extra: Record<string, string> = {}) => ({
  DELEGATE_LOCAL_URL: fake.anthropicUrl,
  DELEGATE_LOCAL_KEY: KEY,
  DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  DELEGATE_AGENT_STATE_DIR: stateDir,
  DELEGATE_TASK_INLINE_S: "0",
  ...extra,
});

async function taskDl(stateDir: string, extra: Record<string, string> = {}): Promise<TaskDl> {
  const s = await connectTaskDl(env(stateDir, extra));
  open.push(s);
  return s;
}

/**
 * The one server of this file's tests that need nothing of their own (no caps, no inline
 * threshold, no restart): started by the first of them, it serves the rest and ends
 * with the file. Each test works in repos of its own; its jobs have ended when it does.
 */
let sharedDl: Promise<TaskDl> | undefined;
function shared(): Promise<TaskDl> {
  sharedDl ??= connectTaskDl(env(join(root, "state-shared")));
  return sharedDl;
}

const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages ?? []).includes("tool_result");

/** Turn 1 runs a command that exits 3; turn 2 answers. */
function scriptBashThenAnswer(delayMs = 100): void {
  fake.always((req) =>
    afterTool(req)
      ? reply.text("Ran the check; it exited 3.", { delayMs })
      : reply.tool("run_bash", { command: "echo checking; exit 3" }, { delayMs }),
  );
}

const agentTask = (workdir: string) => ({ agent_name: "helper", task: "Run the check.", workdir, model: MODEL });

async function settle(execution: { settle: () => Promise<{ outcome: never }> }): Promise<ToolResult> {
  const { outcome } = await execution.settle();
  return resultFromTaskOutcome(outcome) as ToolResult;
}

describe("MCP tasks through dist/dl serve (2026-07-28)", () => {
  test("server/discover offers 2026-07-28 and the tasks extension", async () => {
    const s = await shared();
    expect(s.client.getProtocolEra()).toBe("modern");
    expect(s.client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/tasks"]).toEqual({});
    expect(s.session.capabilities).toBeDefined();
  });

  test("submit_agent as a task settles with its job's result", async () => {
    scriptBashThenAnswer();
    const s = await shared();
    const repo = makeRepo(root, "submit", 0).repo;
    const execution = await s.session.callTool("submit_agent", { tasks: [agentTask(repo)] });
    expect(execution.kind).toBe("task");
    expect(execution.handle?.taskId).toMatch(/^ag-[0-9a-f]+$/);
    const result = await settle(execution as never);
    expect(result.isError).toBeFalsy();
    const [job] = (result.structuredContent as { jobs: JobView[] }).jobs;
    expect(job!.status).toBe("done");
    expect(job!.last_bash_exit).toBe(3);
  }, 60_000);

  test("delegate_to_local_agent as a task runs as a background agent job and settles with the delegation's result", async () => {
    scriptBashThenAnswer();
    const s = await shared();
    const repo = makeRepo(root, "delegate", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", agentTask(repo));
    expect(execution.kind).toBe("task");
    const taskId = execution.handle!.taskId;
    expect(taskId).toMatch(/^delegate_to_local_agent:ag-[0-9a-f]{10}$/);
    const result = await settle(execution as never);
    const r = result.structuredContent as { success: boolean; final_response: string; logs: string };
    expect(r.success).toBe(true);
    expect(r.final_response).toContain("exited 3");
    expect(r.logs).toBe(`dl logs ${taskId.split(":")[1]}`);
  }, 60_000);

  test("delegate_batch as a task is one background job per task; over DELEGATE_MAX_BATCH_SIZE it is refused", async () => {
    scriptBashThenAnswer(10);
    const s = await shared();
    const repos = [0, 1].map((i) => makeRepo(root, `batch-${i}`, 0).repo);
    const execution = await s.session.callTool("delegate_batch", { tasks: repos.map(agentTask) });
    expect(execution.kind).toBe("task");
    expect(execution.handle!.taskId.split(",")).toHaveLength(2);
    const result = await settle(execution as never);
    const batch = result.structuredContent as { results: { success: boolean }[]; succeeded: number };
    expect(batch.results.map((r) => r.success)).toEqual([true, true]);
    expect(batch.succeeded).toBe(2);
    const five = Array.from({ length: 5 }, () => agentTask(repos[0]!));
    const refused = await s.session.callTool("delegate_batch", { tasks: five });
    expect(refused.kind).toBe("immediate");
    const answer = await settle(refused as never);
    expect(answer.isError).toBe(true);
    expect(answer.content[0]!.text).toContain("DELEGATE_MAX_BATCH_SIZE");
  }, 60_000);

  test("a failing delegation is a completed task whose result says it failed, as the blocking call's does", async () => {
    fake.always(() => reply.status(401, { body: '{"error":{"message":"bad key"}}' }));
    const s = await shared();
    const repo = makeRepo(root, "fail", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", agentTask(repo));
    expect(execution.kind).toBe("task");
    const { outcome } = await (
      execution as never as { settle: () => Promise<{ outcome: { status: string } }> }
    ).settle();
    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome as never) as ToolResult;
    // The blocking call reports a run that failed in its result (success false), not as a tool error.
    expect(result.isError).toBeFalsy();
    const r = result.structuredContent as { success: boolean; error: string };
    expect(r.success).toBe(false);
    expect(r.error).toContain("401");
    // A submit task's jobs that did not end done are a tool error (its poll view).
    const submitted = await s.session.callTool("submit_agent", { tasks: [agentTask(repo)] });
    const polled = await settle(submitted as never);
    expect(polled.isError).toBe(true);
    expect((polled.structuredContent as { jobs: JobView[] }).jobs[0]!.status).toBe("failed");
  }, 60_000);

  test("tasks/cancel stops the work and frees its slot", async () => {
    fake.always(reply.hang());
    const stateDir = join(root, "state-cancel");
    const s = await taskDl(stateDir, { DELEGATE_AGENT_MAX_CONCURRENT: "1", DELEGATE_AGENT_MAX_PER_PROJECT: "1" });
    const repo = makeRepo(root, "cancel", 0).repo;
    const execution = await s.session.callTool("submit_agent", { tasks: [agentTask(repo)] });
    const taskId = execution.handle!.taskId;
    await until(async () => fake.inFlight() >= 1, "the agent to reach the backend");
    await s.session.cancelTask(taskId);
    // Its poll view, from the same server's plain Client (the row is in the store).
    const jobs = await until(async () => {
      const r = await callTool<{ jobs: JobView[] }>(s, "poll_agent", { ids: [taskId] });
      return r.data.jobs[0]?.status === "cancelled" ? r.data.jobs : null;
    }, "the job to be cancelled");
    expect(jobs[0]!.status).toBe("cancelled");
    // The one slot is free again: a new job runs to its end.
    fake.reset();
    scriptBashThenAnswer(10);
    const next = await s.session.callTool("submit_agent", { tasks: [agentTask(repo)] });
    const result = await settle(next as never);
    expect((result.structuredContent as { jobs: JobView[] }).jobs[0]!.status).toBe("done");
  }, 60_000);

  test("a task created by one dl serve is settled by a second after the first is SIGKILLed", async () => {
    scriptBashThenAnswer(300);
    const stateDir = join(root, "state-restart");
    const first = await taskDl(stateDir);
    const repo = makeRepo(root, "restart", 0).repo;
    const execution = await first.session.callTool("submit_agent", { tasks: [agentTask(repo)] });
    expect(execution.kind).toBe("task");
    const reference = (execution as never as { serializeReference: () => never }).serializeReference();
    first.io.proc.kill("SIGKILL");
    await first.io.proc.exited;
    const second = await taskDl(stateDir);
    const resumed = await second.session.resumeTask(reference);
    const { outcome } = await resumed.settle();
    // The job died with its server (SIGKILL leaves no one to finish it): the task has
    // still ended, answered by the second server from the store.
    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as ToolResult;
    const [job] = (result.structuredContent as { jobs: JobView[] }).jobs;
    expect(job!.id).toBe(execution.handle!.taskId);
    expect(["done", "lost", "failed"]).toContain(job!.status);
  }, 60_000);

  test("tasks/get from a request that does not declare the extension is refused with -32021", async () => {
    scriptBashThenAnswer(10);
    const s = await shared();
    const repo = makeRepo(root, "undeclared", 0).repo;
    const execution = await s.session.callTool("submit_agent", { tasks: [agentTask(repo)] });
    const taskId = execution.handle!.taskId;
    for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
      const params = { taskId, _meta: MODERN_META, ...(method === "tasks/update" ? { inputResponses: {} } : {}) };
      const answer = (await s.io.raw({ method, params })) as { kind: string; error?: { code: number } };
      expect(answer.kind).toBe("error");
      expect(answer.error?.code).toBe(-32021);
    }
    await settle(execution as never);
  }, 60_000);

  test("a client that declares no tasks extension gets a blocking answer", async () => {
    scriptBashThenAnswer(10);
    const s = await shared();
    const repo = makeRepo(root, "blocking", 0).repo;
    // The plain Client on the same 2026-07-28 session declares no extension.
    const r = (await s.client.callTool(
      { name: "delegate_to_local_agent", arguments: agentTask(repo) },
      { timeout: 60_000 },
    )) as ToolResult;
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { final_response: string }).final_response).toContain("exited 3");
  }, 60_000);
});

/** A gate a scripted model reply waits on: the test opens it when it has looked. */
function gate(): { wait: Promise<void>; open: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { wait: promise, open: () => resolve() };
}

const TASKS_META = {
  ...MODERN_META,
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
};

describe("quick calls answer in place; slow ones become tasks (DELEGATE_TASK_INLINE_S)", () => {
  test("a delegation that ends within the threshold answers the call itself, with no task", async () => {
    scriptBashThenAnswer(10);
    const s = await taskDl(join(root, "state-inline"), { DELEGATE_TASK_INLINE_S: "10" });
    const repo = makeRepo(root, "inline", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", agentTask(repo));
    expect(execution.kind).toBe("immediate");
    expect(execution.handle).toBeUndefined();
    const result = await settle(execution as never);
    const r = result.structuredContent as { success: boolean; final_response: string; logs: string };
    expect(r.success).toBe(true);
    expect(r.final_response).toContain("exited 3");
    // It ran as an agent job all the same: its log is the job's.
    expect(r.logs).toMatch(/^dl logs ag-[0-9a-f]{10}$/);
  }, 60_000);

  test("one still running when the threshold passes becomes a task, and settles later", async () => {
    const later = gate();
    fake.always(async (req) => {
      if (!afterTool(req)) return reply.tool("run_bash", { command: "exit 0" });
      await later.wait;
      return reply.text("finished late");
    });
    const s = await taskDl(join(root, "state-slow"), { DELEGATE_TASK_INLINE_S: "0.3" });
    const repo = makeRepo(root, "slow", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", agentTask(repo));
    expect(execution.kind).toBe("task");
    later.open();
    const r = (await settle(execution as never)).structuredContent as { final_response: string };
    expect(r.final_response).toBe("finished late");
  }, 60_000);

  test("a call its client abandons before it became a task cancels its job", async () => {
    fake.always(reply.hang());
    const stateDir = join(root, "state-abandon");
    const s = await taskDl(stateDir, { DELEGATE_TASK_INLINE_S: "30" });
    const repo = makeRepo(root, "abandon", 0).repo;
    const params = { name: "submit_agent", arguments: { tasks: [agentTask(repo)] }, _meta: TASKS_META };
    const answer = s.io.raw({ method: "tools/call", params });
    const requestId = s.io.lastRawId;
    await until(async () => fake.inFlight() >= 1, "the agent to reach the backend");
    // The client gives up on the call before it was answered.
    await s.io.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } } as never);
    void answer;
    await until(async () => {
      const listed = await callTool<{ jobs: JobView[] }>(s, "poll_agent", {
        ids: [(await jobIds(stateDir))[0]!],
      });
      return listed.data.jobs[0]?.status === "cancelled";
    }, "the abandoned call's job to be cancelled");
  }, 60_000);
});

/** The ids of the jobs in an agent store, oldest first (the tests above queue one per store). */
async function jobIds(stateDir: string): Promise<string[]> {
  const store = JobStore.open(stateDir, { provider: "agent", readonly: true });
  try {
    return store
      .listRecent(10)
      .map((r) => r.id)
      .reverse();
  } finally {
    store.close();
  }
}

describe("a running agent task's statusMessage moves with the work", () => {
  test("turn n of max, the last tool and its exit, as each turn ends", async () => {
    const second = gate();
    const third = gate();
    let calls = 0;
    fake.always(async () => {
      calls++;
      if (calls === 1) return reply.tool("run_bash", { command: "echo one; exit 3" });
      if (calls === 2) {
        await second.wait;
        return reply.tool("run_bash", { command: "echo two" });
      }
      await third.wait;
      return reply.text("all done");
    });
    const s = await shared();
    const repo = makeRepo(root, "progress", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", { ...agentTask(repo), max_turns: 5 });
    expect(execution.kind).toBe("task");
    const task = s.session.task(execution.handle!.taskId);
    // While the model thinks about turn 2, the task says what turn 1 did.
    await until(async () => calls >= 2, "the second model call");
    const first = await until(async () => {
      const m = (await task.snapshot()).statusMessage ?? "";
      return m.includes("turn 1/5") ? m : null;
    }, "the first turn in the status");
    expect(first).toContain("run_bash");
    expect(first).toContain("(exit 3)");
    second.open();
    await until(async () => calls >= 3, "the third model call");
    const next = await until(async () => {
      const m = (await task.snapshot()).statusMessage ?? "";
      return m.includes("turn 2/5") ? m : null;
    }, "the second turn in the status");
    expect(next).toContain("(exit 0)");
    expect(next).not.toBe(first);
    third.open();
    const done = await settle(execution as never);
    expect((done.structuredContent as { final_response: string }).final_response).toBe("all done");
  }, 60_000);
});

describe("both protocol eras", () => {
  test("a 2025-11-25 initialize and a 2026-07-28 server/discover see the same tools", async () => {
    const names: string[][] = [];
    for (const mode of ["legacy", "auto"] as const) {
      // The 2026-07-28 side is the file's shared server (its Client negotiates in auto
      // mode too, with the same environment but its store); the 2025-11-25 one is a
      // server of its own, since a connection's era is settled at its start.
      let client: Client;
      if (mode === "auto") client = (await shared()).client;
      else {
        const transport = new StdioClientTransport({
          command: requireBinary(),
          args: ["serve"],
          env: testEnv(env(join(root, "state-eras"))),
        });
        client = new Client({ name: "dl-era-test", version: "1.0.0" }, { versionNegotiation: { mode } });
        await client.connect(transport);
        open.push(client);
      }
      expect(client.getProtocolEra()).toBe(mode === "auto" ? "modern" : "legacy");
      names.push((await client.listTools()).tools.map((t) => t.name));
      if (mode === "legacy") await client.close();
    }
    expect(names[0]!.length).toBeGreaterThan(5);
    expect(names[1]).toEqual(names[0]!);
  });

  test("tools/list is made once per process and kept in memory: the same answer twice, nothing on disk", async () => {
    const cacheDir = tempDir("list-cache");
    const s = await connectDl({ ...env(join(root, "state-cache")), DELEGATE_CACHE_DIR: cacheDir });
    const first = (await s.client.listTools()).tools;
    expect(first.length).toBeGreaterThan(5);
    expect((await s.client.listTools()).tools).toEqual(first);
    await s.close();
    expect(existsSync(join(cacheDir, "tools-list"))).toBe(false);
  });
});
