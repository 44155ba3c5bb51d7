import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, type DlSession, requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Jobs belong to their project, through dist/dl serve: two servers on one agent state dir,
 * each started in its own project (the cwd a Claude Code session gives it). Before, the
 * second project's server could cancel the first one's queued jobs (cancel_agent and
 * tasks/cancel), tasks/list showed every project's jobs, and a tasks/cancel over several
 * jobs cancelled the ones it could before failing on the next.
 */
const KEY = "sk-cancel-ownership";
const MODEL = "local-own-model";

type Job = { id: string; status: string };
type Session = DlSession & { pid: number };

let fake: FakeModel;
let root: string;
let stateDir: string;
let agentsDir: string;
const sessions: Session[] = [];

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  fake.always(reply.hang());
  root = tempDir("cancel-own");
  stateDir = join(root, "agent-state");
  agentsDir = tempDir("cancel-own-agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
});
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await fake?.stop();
});

/** `dl serve` in `project`, with task support declared; one agent job at a time machine-wide. */
async function serveIn(project: string): Promise<Session> {
  const transport = new StdioClientTransport({
    command: requireBinary(),
    args: ["serve"],
    cwd: project,
    stderr: "pipe",
    env: testEnv({
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: KEY,
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
      DELEGATE_AGENT_STATE_DIR: stateDir,
      DELEGATE_AGENT_MAX_CONCURRENT: "1",
      DELEGATE_AGENT_MAX_PER_PROJECT: "1",
    }),
  });
  const client = new Client({ name: "dl-own-test", version: "1.0.0" }, { capabilities: { tasks: {} } });
  await client.connect(transport);
  const s: Session = { client, transport, stderr: () => "", close: () => client.close(), pid: transport.pid! };
  sessions.push(s);
  return s;
}

async function submit(s: Session, workdir: string, n = 1): Promise<string[]> {
  const tasks = Array.from({ length: n }, () => ({ agent_name: "helper", task: "t", workdir, model: MODEL }));
  const r = await callTool<{ jobs: { id: string }[] }>(s, "submit_agent", { tasks });
  expect(r.isError).toBeFalsy();
  return r.data.jobs.map((j) => j.id);
}

async function statusOf(s: Session, id: string): Promise<string> {
  return (await callTool<{ jobs: Job[] }>(s, "poll_agent", { ids: [id] })).data.jobs[0]!.status;
}

describe("cancel and tasks/list act on the caller's project only", () => {
  let a: Session;
  let b: Session;
  let repoA: string;
  let repoB: string;
  let running: string;
  let queued: string;

  beforeAll(async () => {
    repoA = makeRepo(root, "project-a").repo;
    repoB = makeRepo(root, "project-b").repo;
    a = await serveIn(repoA);
    b = await serveIn(repoB);
    [running, queued] = (await submit(a, repoA, 2)) as [string, string];
    await until(async () => (await statusOf(a, running!)) === "running", "project A's first job to run", 30_000);
    expect(await statusOf(a, queued!)).toBe("queued");
  });

  test("cancel_agent from another project's server is refused, naming the owner; the job stays queued", async () => {
    const r = await callTool(b, "cancel_agent", { id: queued });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`job ${queued} belongs to project ${realpathSync(join(repoA, ".git"))}`);
    expect(r.text).toContain(`server pid ${a.pid}`);
    expect(await statusOf(a, queued)).toBe("queued");
  });

  test("tasks/cancel from another project's server is refused; the job stays queued", async () => {
    await expect(b.client.experimental.tasks.cancelTask(queued)).rejects.toThrow(/belongs to project/);
    expect(await statusOf(a, queued)).toBe("queued");
  });

  test("tasks/list shows each server its own project's jobs", async () => {
    const ofA = (await a.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    const ofB = (await b.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(ofA).toEqual(expect.arrayContaining([running, queued]));
    expect(ofB).not.toContain(running);
    expect(ofB).not.toContain(queued);
  });

  test("a tasks/cancel over several jobs checks them all first: one foreign job, nothing cancelled", async () => {
    const [own] = await submit(b, repoB);
    expect(await statusOf(b, own!)).toBe("queued"); // the one machine-wide slot is A's
    await expect(b.client.experimental.tasks.cancelTask(`${own},${queued}`)).rejects.toThrow(/belongs to project/);
    expect(await statusOf(b, own!)).toBe("queued");
    expect(await statusOf(a, queued)).toBe("queued");
    // Its own job alone: cancelled.
    const c = await callTool<{ status: string }>(b, "cancel_agent", { id: own });
    expect(c.data.status).toBe("cancelled");
  });

  test("the owner's project cancels its own queued job; a dead owner's jobs are anyone's", async () => {
    const c = await callTool<{ status: string }>(a, "cancel_agent", { id: queued });
    expect(c).toMatchObject({ isError: undefined, data: { status: "cancelled" } });
    const [later] = await submit(a, repoA);
    process.kill(a.pid, "SIGKILL");
    await until(() => {
      try {
        process.kill(a.pid, 0);
        return false;
      } catch {
        return true;
      }
    }, "server A to die");
    const r = await callTool<{ status: string }>(b, "cancel_agent", { id: later });
    expect(r.isError).toBeFalsy();
    expect(["cancelled", "lost"]).toContain(r.data.status);
  });
});
