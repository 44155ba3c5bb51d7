import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
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
afterAll(async () => {
  await Promise.all(open.map((s) => s.close().catch(() => undefined)));
  await fake?.stop();
});
beforeEach(() => fake.reset());

const env = (stateDir: string, extra: Record<string, string> = {}) => ({
  DELEGATE_LOCAL_URL: fake.anthropicUrl,
  DELEGATE_LOCAL_KEY: KEY,
  DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  DELEGATE_AGENT_STATE_DIR: stateDir,
  ...extra,
});

async function taskDl(stateDir: string, extra: Record<string, string> = {}): Promise<TaskDl> {
  const s = await connectTaskDl(env(stateDir, extra));
  open.push(s);
  return s;
}

async function plainDl(stateDir: string): Promise<DlSession> {
  const s = await connectDl(env(stateDir));
  open.push(s);
  return s;
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
    const s = await taskDl(join(root, "state-discover"));
    expect(s.client.getProtocolEra()).toBe("modern");
    expect(s.client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/tasks"]).toEqual({});
    expect(s.session.capabilities).toBeDefined();
  });

  test("submit_agent as a task settles with its job's result", async () => {
    scriptBashThenAnswer();
    const s = await taskDl(join(root, "state-submit"));
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

  test("delegate_to_local_agent as a task runs as a background agent job and settles", async () => {
    scriptBashThenAnswer();
    const s = await taskDl(join(root, "state-delegate"));
    const repo = makeRepo(root, "delegate", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", agentTask(repo));
    expect(execution.kind).toBe("task");
    expect(execution.handle?.taskId).toMatch(/^ag-/);
    const result = await settle(execution as never);
    const [job] = (result.structuredContent as { jobs: JobView[] }).jobs;
    expect(job!.status).toBe("done");
    expect(job!.final_response).toContain("exited 3");
  }, 60_000);

  test("delegate_batch as a task is one background job per task; over DELEGATE_MAX_BATCH_SIZE it is refused", async () => {
    scriptBashThenAnswer(10);
    const s = await taskDl(join(root, "state-batch"));
    const repos = [0, 1].map((i) => makeRepo(root, `batch-${i}`, 0).repo);
    const execution = await s.session.callTool("delegate_batch", { tasks: repos.map(agentTask) });
    expect(execution.kind).toBe("task");
    expect(execution.handle!.taskId.split(",")).toHaveLength(2);
    const result = await settle(execution as never);
    expect((result.structuredContent as { jobs: JobView[] }).jobs.map((j) => j.status)).toEqual(["done", "done"]);
    const five = Array.from({ length: 5 }, () => agentTask(repos[0]!));
    const refused = await s.session.callTool("delegate_batch", { tasks: five });
    expect(refused.kind).toBe("immediate");
    const answer = await settle(refused as never);
    expect(answer.isError).toBe(true);
    expect(answer.content[0]!.text).toContain("DELEGATE_MAX_BATCH_SIZE");
  }, 60_000);

  test("a failing delegation is a completed task with isError", async () => {
    fake.always(() => reply.status(401, { body: '{"error":{"message":"bad key"}}' }));
    const s = await taskDl(join(root, "state-fail"));
    const repo = makeRepo(root, "fail", 0).repo;
    const execution = await s.session.callTool("delegate_to_local_agent", agentTask(repo));
    expect(execution.kind).toBe("task");
    const { outcome } = await (
      execution as never as { settle: () => Promise<{ outcome: { status: string } }> }
    ).settle();
    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome as never) as ToolResult;
    expect(result.isError).toBe(true);
    const [job] = (result.structuredContent as { jobs: JobView[] }).jobs;
    expect(job!.status).toBe("failed");
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
    const plain = await plainDl(stateDir);
    const jobs = await until(async () => {
      const r = await callTool<{ jobs: JobView[] }>(plain, "poll_agent", { ids: [taskId] });
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
    const s = await taskDl(join(root, "state-undeclared"));
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
    const s = await taskDl(join(root, "state-blocking"));
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

describe("both protocol eras", () => {
  test("a 2025-11-25 initialize and a 2026-07-28 server/discover see the same tools", async () => {
    const stateDir = join(root, "state-eras");
    const names: string[][] = [];
    for (const mode of ["legacy", "auto"] as const) {
      const transport = new StdioClientTransport({
        command: requireBinary(),
        args: ["serve"],
        env: testEnv(env(stateDir)),
      });
      const client = new Client({ name: "dl-era-test", version: "1.0.0" }, { versionNegotiation: { mode } });
      await client.connect(transport);
      open.push(client);
      expect(client.getProtocolEra()).toBe(mode === "auto" ? "modern" : "legacy");
      names.push((await client.listTools()).tools.map((t) => t.name));
      await client.close();
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
