import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, type DlSession, requireBinary, tempDir } from "../helpers/dl.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Jobs belong to their project, through dist/dl serve: two servers on one agent state dir,
 * each started in its own project (the cwd a Claude Code session gives it). Before, the
 * second project's server could cancel the first one's queued jobs (cancel_agent and
 * tasks/cancel), and a tasks/cancel over several jobs cancelled the ones it could before
 * failing on the next. (tasks/list, which listed every project's jobs, is not part of the
 * 2026-07-28 tasks extension dl now speaks.)
 */
const KEY = "sk-cancel-ownership";
const MODEL = "local-own-model";

type Job = { id: string; status: string };
type Session = DlSession & { pid: number; tasks: TaskDl };

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

/** `dl serve` in `project` on 2026-07-28 (tasks/* available); one agent job at a time machine-wide. */
async function serveIn(project: string): Promise<Session> {
  const tasks = await connectTaskDl(
    {
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: KEY,
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
      DELEGATE_AGENT_STATE_DIR: stateDir,
      DELEGATE_AGENT_MAX_CONCURRENT: "1",
      DELEGATE_AGENT_MAX_PER_PROJECT: "1",
    },
    { cwd: project },
  );
  const s = { client: tasks.client, close: tasks.close, pid: tasks.io.proc.pid, tasks } as unknown as Session;
  sessions.push(s);
  return s;
}

/** tasks/cancel as the ext-tasks requester sends it; the error message when it is refused. */
async function cancelTask(s: Session, taskId: string): Promise<{ ok: boolean; message: string; code?: number }> {
  try {
    await s.tasks.session.cancelTask(taskId as never); // a task id is the job ids, as the server made it
    return { ok: true, message: "" };
  } catch (e) {
    return { ok: false, message: (e as Error).message, code: (e as { code?: number }).code };
  }
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

describe("cancel_agent and tasks/cancel act on the caller's project only", () => {
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
    const r = await cancelTask(b, queued);
    expect(r.ok).toBe(false);
    expect(r.message).toContain(`job ${queued} belongs to project`);
    // The extension's protocol error for a task id this request cannot act on; not -32603 (a server fault).
    expect(r.code).toBe(-32602);
    expect(await statusOf(a, queued)).toBe("queued");
  });

  test("a tasks/cancel over several jobs checks them all first: one foreign job, nothing cancelled", async () => {
    const [own] = await submit(b, repoB);
    expect(await statusOf(b, own!)).toBe("queued"); // the one machine-wide slot is A's
    const r = await cancelTask(b, `${own},${queued}`);
    expect(r.ok).toBe(false);
    expect(r.message).toContain(`job ${queued} belongs to project`);
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
