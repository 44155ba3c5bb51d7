import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import type { JobRow } from "../../src/store/types.ts";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir } from "../helpers/dl.ts";
import { pidAlive } from "../helpers/proc.ts";
import { supervisorOf } from "../helpers/supervisor.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * No spend lost: whatever way a job ended, the tokens it spent reach the usage ledger
 * (`dl usage`), under the model that spent them. Through dist/dl serve with agent jobs
 * against a scripted fake model (a first turn that spends a known amount, then a turn
 * that never answers) and dsh jobs with the fake launcher.
 */
const KEY = "sk-usage-jobs";
const FAKE_DSH = join(import.meta.dir, "..", "fixture", "fake-dsh.sh");

let fake: FakeModel;
let root: string;
let agentsDir: string;
let modelsFile: string;
const open: DlSession[] = [];

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("usage-jobs");
  agentsDir = join(root, "agents");
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
  modelsFile = join(root, "dsh-models.json");
  writeFileSync(modelsFile, JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }));
});
// A test's servers end with it: an idle server still ticks its engines.
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
});
afterAll(async () => {
  await fake?.stop();
});

/** One server's settings and its own user cache (so dl usage from a shell finds its stores). */
function setting(name: string): Record<string, string> {
  return {
    XDG_CACHE_HOME: join(root, `cache-${name}`),
    DELEGATE_AGENT_STATE_DIR: join(root, `agent-${name}`),
    DELEGATE_DSH_STATE_DIR: join(root, `dsh-${name}`),
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_DSH_LAUNCHER: FAKE_DSH,
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_DSH_STAGGER_S: "0",
  };
}

/** A job's row as any process reads it. */
function readRow(stateDir: string, id: string): JobRow | undefined {
  const store = JobStore.open(stateDir, { readonly: true });
  try {
    return store.get(id);
  } finally {
    store.close();
  }
}

async function serve(env: Record<string, string>): Promise<DlSession> {
  const s = await connectDl(env);
  open.push(s);
  return s;
}

const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages ?? []).includes("tool_result");

/** Turn 1 spends 700 in, 300 cached, 70 out and runs a command; turn 2 never answers. */
function spendThenHang(): void {
  fake.reset();
  fake.always((req) =>
    afterTool(req)
      ? reply.hang()
      : reply.tool("run_bash", { command: "echo working" }, { usage: { input: 700, cacheRead: 300, output: 70 } }),
  );
}

type Group = { key: string; runs: number; input_tokens: number; cache_read_tokens: number; output_tokens: number };

async function usageBy(env: Record<string, string>, by: "model" | "kind"): Promise<Map<string, Group>> {
  const r = await runDl(["usage", "--json", "--by", by], env);
  expect(r.code).toBe(0);
  return new Map((JSON.parse(r.stdout) as { groups: Group[] }).groups.map((g) => [g.key, g]));
}

/**
 * The ledger's group `key` once it counts `runs` runs. A job's row ends first and its
 * ledger entry follows a moment later in the same process (the launcher's onEnded), so
 * a reader right after the end may look in between.
 */
function usageOnce(env: Record<string, string>, by: "model" | "kind", key: string, runs = 1): Promise<Group> {
  return until(async () => {
    const g = (await usageBy(env, by)).get(key);
    return g && g.runs >= runs ? g : null;
  }, `${runs} run(s) of ${key} in the ledger`);
}

async function submitAgent(s: DlSession, model: string): Promise<string> {
  const workdir = makeRepo(root, `repo-${model}-${crypto.randomUUID().slice(0, 8)}`, 0).repo;
  const r = await callTool<{ jobs: { id: string }[] }>(s, "submit_agent", {
    tasks: [{ agent_name: "helper", task: "Work.", workdir, model }],
  });
  return r.data.jobs[0]!.id;
}

/** Until the job's second model call is in flight: its first turn has been spent and recorded. */
const secondTurnWaiting = () =>
  until(async () => fake.requests.length >= 2 && fake.inFlight() >= 1, "the job's second model call");

describe("every job's tokens reach the ledger, however it ended", () => {
  test("a cancelled agent job: its turns' tokens under its model", async () => {
    spendThenHang();
    const env = setting("cancel");
    const s = await serve(env);
    const id = await submitAgent(s, "cloud-cancelled");
    await secondTurnWaiting();
    const cancelled = await callTool<{ status: string }>(s, "cancel_agent", { id });
    expect(cancelled.data.status).toBe("cancelled");
    const g = await usageOnce(env, "model", "cloud-cancelled");
    expect(g).toMatchObject({ runs: 1, input_tokens: 700, cache_read_tokens: 300, output_tokens: 70 });
  }, 60_000);

  test("an agent job stopped with its server (DELEGATE_JOBS_DIE_WITH_SERVER=1, stdin closed): its tokens are recorded", async () => {
    spendThenHang();
    const env: Record<string, string> = { ...setting("stopped"), DELEGATE_JOBS_DIE_WITH_SERVER: "1" };
    const s = await serve(env);
    const id = await submitAgent(s, "cloud-stopped");
    await secondTurnWaiting();
    await s.close();
    const row = await until(() => {
      const r = readRow(env.DELEGATE_AGENT_STATE_DIR!, id);
      return r && r.status !== "running" ? r : null;
    }, "the job to stop with its server");
    expect([row.status, row.failure_kind]).toEqual(["cancelled", "server_stopped"]);
    const g = await usageOnce(env, "model", "cloud-stopped");
    expect(g).toMatchObject({ runs: 1, input_tokens: 700, output_tokens: 70 });
  }, 60_000);

  test("an agent job whose supervisor was SIGKILLed: dl reap kills its run and records what its transcript says it spent", async () => {
    spendThenHang();
    const env = setting("killed");
    const s = await serve(env);
    const id = await submitAgent(s, "cloud-killed");
    await secondTurnWaiting();
    const supervisor = supervisorOf(env.DELEGATE_AGENT_STATE_DIR!, id);
    // The window goes first (the job outlives it): a live server's reaper would race dl
    // reap for the dead supervisor's job, and on a loaded machine it won.
    await s.close();
    process.kill(supervisor, "SIGKILL");
    await until(() => !pidAlive(supervisor), "the supervisor to be gone");
    const reap = await runDl(["reap", "--json"], env);
    expect(reap.code).toBe(0);
    expect(reap.stdout).toContain(id);
    const g = await usageOnce(env, "model", "cloud-killed");
    expect(g).toMatchObject({ runs: 1, input_tokens: 700, cache_read_tokens: 300, output_tokens: 70 });
  }, 60_000);

  test("dsh jobs record the tokens their result reports, split or as one total", async () => {
    const env = setting("dsh");
    const s = await serve(env);
    const repo = makeRepo(root, "dsh", 0).repo;
    const tasks = [
      { task: "MODE: ok\nDo it.", model: "ds-flash", workdir: repo },
      { task: "MODE: fail\nDo it.", model: "ds-flash", workdir: makeRepo(root, "dsh-2", 0).repo },
    ];
    const r = await callTool<{ jobs: { id: string }[] }>(s, "submit_dsh", { tasks });
    for (const { id } of r.data.jobs) {
      await until(async () => {
        const [j] = (await callTool<{ jobs: { status: string }[] }>(s, "poll_dsh", { ids: [id] })).data.jobs;
        return j && !["queued", "running"].includes(j.status);
      }, `dsh job ${id} to end`);
    }
    // ok: {"input":1200,"output":340}; fail: 10, a total of no stated kind, counted as input.
    expect(await usageOnce(env, "kind", "dsh", 2)).toMatchObject({ runs: 2, input_tokens: 1210, output_tokens: 340 });
  }, 60_000);
});

describe("a job whose end never reached the ledger", () => {
  /**
   * What a supervisor killed between its two writes leaves: the job's row ended (with what
   * it spent), and no ledger row. Written through the store's own API, as the engine does.
   */
  function endedUnledgered(stateDir: string, id: string, tokens: { input: number; output: number }): void {
    const store = JobStore.open(stateDir, { provider: "dsh" });
    try {
      const t = Date.now();
      store.insertMany([
        {
          id,
          provider: "dsh",
          project: "/p",
          workdir: "/p",
          workspace_root: "/p",
          task: "t",
          created_at: t,
          owner_pid: process.pid,
          owner_start: null,
          server_id: "srv-gone",
        },
      ]);
      expect(store.update(id, { status: "running", started_at: t }, ["queued"])).toBe(true);
      const usage = JSON.stringify({ tokens });
      expect(store.update(id, { status: "done", ended_at: t + 5, usage }, ["running"])).toBe(true);
    } finally {
      store.close();
    }
  }

  test("dl usage records it from its row; dl reap records one before pruning its row", async () => {
    const env: Record<string, string> = { ...setting("unledgered"), DELEGATE_JOB_RETENTION_DAYS: "0" };
    const dir = env.DELEGATE_DSH_STATE_DIR!;
    endedUnledgered(dir, "dsh-00000000a1", { input: 100, output: 10 });
    expect((await usageBy(env, "kind")).get("dsh")).toMatchObject({ runs: 1, input_tokens: 100, output_tokens: 10 });

    // This one is never read before dl reap prunes its row (retention 0 days).
    endedUnledgered(dir, "dsh-00000000a2", { input: 200, output: 20 });
    const reap = await runDl(["reap", "--json"], env);
    expect(reap.code).toBe(0);
    expect(readRow(dir, "dsh-00000000a2")).toBeUndefined();
    expect((await usageBy(env, "kind")).get("dsh")).toMatchObject({ runs: 2, input_tokens: 300, output_tokens: 30 });
  });
});
