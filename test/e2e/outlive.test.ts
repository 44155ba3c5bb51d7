import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { JobStore } from "../../src/store/jobs.ts";
import type { JobRow } from "../../src/store/types.ts";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { type FakeResponses, type SeenRequest, type Step, startFakeResponses } from "../fixture/fake-responses.ts";
import { allProvidersEnv } from "../helpers/all-providers.ts";
import { markerRouter } from "../helpers/codex-home.ts";
import { requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { pidAlive } from "../helpers/proc.ts";
import { supervisorOf } from "../helpers/supervisor.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * Work outlives the window: each job is run by a supervisor of its own, so when the
 * server that took the call is SIGKILLed, or its stdin closes (the host went away), the
 * job runs on to `done` with its answer and its changes, and a new `dl serve` polls it
 * and settles its MCP task (tasks/get) from the store. Through dist/dl
 * with each provider: agent jobs against a scripted fake model (its run writes a file),
 * the real Codex CLI against a fake Responses API (its model calls Codex's own exec and
 * apply_patch tools once the window is gone, and Codex writes the file in the workdir),
 * the fake agy in the real jail (it writes a file), the fake dsh launcher (its change
 * stays in the job's out_dir).
 */
const KEY = "sk-outlive";
/** A model that never answers: its job holds its slot until it is killed. */
const BLOCKING_MODEL = "local-blocking";

let fake: FakeModel;
let codexFake: FakeResponses;
/**
 * Each run's last step waits for its gate, opened by the test once the window is gone (no
 * delay that is "long enough"): the fake model's answer, Codex's edit, and the fake agy's
 * and dsh launcher's work, which wait for the gate file in the workdir.
 */
const gates = new Map<string, PromiseWithResolvers<void>>();
const gate = (key: string) => {
  if (!gates.has(key)) gates.set(key, Promise.withResolvers<void>());
  return gates.get(key)!;
};
const GATE_FILE = ".outlive-gate";
function openGate(key: string, workdir: string): void {
  writeFileSync(join(workdir, GATE_FILE), "");
  gate(key).resolve();
}
const CODEX_FILE = "codex.txt";
function codexRouter(): (req: SeenRequest) => Step {
  const base = markerRouter();
  return (req) => {
    const key = /\[edit-after:([a-z-]+)\]/.exec(req.prompt)?.[1];
    if (key === undefined) return base(req);
    return { kind: "edit", file: CODEX_FILE, content: "written by codex\n", until: gate(key).promise };
  };
}
let root: string;
let env: Record<string, string>;
const open: TaskDl[] = [];

const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages ?? []).includes("tool_result");

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  // Turn 1 writes a file; turn 2 answers once the test opens the task's gate.
  fake.always(async (req) => {
    if (req.model === BLOCKING_MODEL) return reply.hang();
    if (!afterTool(req)) return reply.tool("write_file", { path: "note.txt", content: "written by the agent\n" });
    const key = /\[gate:([a-z-]+)\]/.exec(JSON.stringify(req.body.messages ?? []))?.[1];
    if (key !== undefined) await gate(key).promise;
    return reply.text("Wrote the note.");
  });
  codexFake = startFakeResponses(codexRouter());
  root = tempDir("outlive");
  const agentsDir = join(root, "agents");
  await Bun.write(
    join(agentsDir, "helper.md"),
    "---\nname: helper\ndescription: helper\ntools: write_file\n---\nHelp.\n",
  );
  env = {
    ...allProvidersEnv({ root, modelUrl: fake.anthropicUrl, key: KEY, agentsDir, codexBaseUrl: codexFake.baseUrl }),
    XDG_CACHE_HOME: join(root, "cache"),
    DELEGATE_TASK_INLINE_S: "0",
  };
});
// A test's servers end with it: an idle server still ticks every provider's engine.
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
});
afterAll(async () => {
  await fake?.stop();
  await codexFake?.stop();
});

async function server(cwd: string): Promise<TaskDl> {
  const s = await connectTaskDl(env, { cwd });
  open.push(s);
  return s;
}

function readRow(stateDir: string, id: string): JobRow | undefined {
  const store = JobStore.open(stateDir, { readonly: true });
  try {
    return store.get(id);
  } finally {
    store.close();
  }
}

type Case = {
  provider: string;
  stateDir: () => string;
  /** The call made as a task, which cannot end before the test opens the gate of `key`. */
  call: (workdir: string, key: string) => [tool: string, args: Record<string, unknown>];
  /** A change the job makes only once its gate opens (after the window ended). */
  gated?: { file: string };
  /** What the ended job left: its answer in the task's result, its change on disk. */
  check: (result: Record<string, unknown>, workdir: string, row: JobRow) => void;
};

const CASES: Case[] = [
  {
    provider: "agent",
    stateDir: () => env.DELEGATE_AGENT_STATE_DIR!,
    call: (workdir, key) => [
      "delegate_to_local_agent",
      { agent_name: "helper", task: `Write the note. [gate:${key}]`, workdir, model: "local-outlive" },
    ],
    check: (r, workdir) => {
      expect(r).toMatchObject({ success: true, final_response: "Wrote the note." });
      expect(readFileSync(join(workdir, "note.txt"), "utf8")).toBe("written by the agent\n");
    },
  },
  {
    provider: "codex",
    stateDir: () => env.DELEGATE_CODEX_STATE_DIR!,
    call: (workdir, key) => ["delegate_to_codex", { task: `[edit-after:${key}] add codex.txt`, workdir }],
    gated: { file: CODEX_FILE },
    check: (r, workdir) => {
      expect(r).toMatchObject({ status: "done", final_response: `wrote ${CODEX_FILE}` });
      // Codex's own report of the change (its --json file_change item), and the change on disk.
      expect((r.usage as { items: Record<string, number> }).items.file_change).toBe(1);
      expect(readFileSync(join(workdir, CODEX_FILE), "utf8")).toBe("written by codex\n");
    },
  },
  {
    provider: "gemini",
    stateDir: () => env.DELEGATE_GEMINI_STATE_DIR!,
    call: (workdir) => ["delegate_to_gemini", { task: `AWAIT=${GATE_FILE} WRITE=agy.txt edit it`, workdir }],
    check: (r, workdir) => {
      expect(r).toMatchObject({ status: "done" });
      expect(String(r.response)).toContain("edit it");
      expect(readFileSync(join(workdir, "agy.txt"), "utf8")).toBe("written by agy\n");
    },
  },
  {
    provider: "dsh",
    stateDir: () => env.DELEGATE_DSH_STATE_DIR!,
    call: (workdir) => [
      "submit_dsh",
      { tasks: [{ task: `MODE: ok\nAWAIT: ${GATE_FILE}\nDo it.`, model: "ds-flash", workdir }] },
    ],
    check: (r) => {
      const [job] = r.jobs as { status: string; final_response: string; out_dir: string }[];
      expect(job!.status).toBe("done");
      expect(job!.final_response).toContain("Did the task with ds-flash");
      expect(readFileSync(join(job!.out_dir, "change.patch"), "utf8")).toContain("change for ds-flash");
    },
  },
];

/** The job's id inside a task id (`tool:id` for a delegation, the id for a submit). */
const jobIdOf = (taskId: string) => taskId.slice(taskId.indexOf(":") + 1);

/**
 * How the window goes away: a SIGKILL; stdin closed; or what Claude Code 2.1.332 does at
 * either exit choice (docs/HOSTS.md, measured): SIGINT, SIGTERM 100 ms later, SIGKILL
 * about half a second after the first.
 */
type Exit = "SIGKILL" | "stdin closed" | "Claude Code's exit";

async function endServer(proc: TaskDl["io"]["proc"], how: Exit): Promise<void> {
  if (how === "SIGKILL") proc.kill("SIGKILL");
  else if (how === "stdin closed") proc.stdin.end();
  else {
    proc.kill("SIGINT");
    await Bun.sleep(100); // the host's own timing, not a wait for a condition
    proc.kill("SIGTERM");
    await Bun.sleep(400);
    proc.kill("SIGKILL");
  }
  await proc.exited;
}

/** The job's row once its child runs under the supervisor. */
function runningUnderSupervisor(c: Case, id: string) {
  return until(() => {
    const r = readRow(c.stateDir(), id);
    return r?.status === "running" && r.child_pid !== null ? r : null;
  }, `${id} to run under its supervisor`);
}

/** What the host and the stores showed of one provider's job while its window ended and the next server settled it. */
type Seen = {
  kind: string;
  id: string;
  workdir: string;
  firstPid: number;
  running: JobRow;
  supervisorAliveAfterEnd: boolean;
  gatedFileBeforeGate: boolean | null;
  outcome: { status: string };
  result: { isError?: boolean; structuredContent: Record<string, unknown> };
  row: JobRow;
  polled: string;
};

/**
 * One window per way it ends: a server takes one job of each provider (each its own repo,
 * its own gate), the window ends that way while every job runs under its supervisor, the
 * gates open, and a new server settles every task (tasks/get) from the store and polls
 * each job. Each provider's test reads its own job's account (one window with every
 * provider's work in it ends as one window does). A provider whose run throws fails only
 * its own test.
 */
const windows = new Map<Exit, Promise<Map<string, Seen | Error>>>();
const windowEnding = (how: Exit) => {
  if (!windows.has(how)) windows.set(how, endOneWindow(how));
  return windows.get(how)!;
};

const keyOf = (c: Case, how: Exit) => `${c.provider}-${how.replace(/\W+/g, "-").toLowerCase()}`;

const failure = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/** One provider's job, called as a task on the window's server, once it runs under its supervisor. */
async function startJob(first: TaskDl, c: Case, how: Exit) {
  // One gate per provider and exit: a gate another case opened would let this job finish early.
  const key = keyOf(c, how);
  const workdir = makeRepo(root, key, 0).repo;
  const [tool, args] = c.call(workdir, key);
  const execution = await first.session.callTool(tool, args as never);
  const id = jobIdOf(execution.handle!.taskId);
  const running = await runningUnderSupervisor(c, id);
  const reference = (execution as never as { serializeReference: () => never }).serializeReference();
  return { c, key, workdir, kind: execution.kind, id, running, reference };
}
type Started = Awaited<ReturnType<typeof startJob>>;

/** What a new server answers for a job another server started: its task settled, its row, its poll. */
async function settleJob(second: TaskDl, s: Started) {
  const { outcome } = await (await second.session.resumeTask(s.reference)).settle();
  const result = resultFromTaskOutcome(outcome as never) as Seen["result"];
  const row = readRow(s.c.stateDir(), s.id)!;
  const polled = (await second.client.callTool({ name: `poll_${s.c.provider}`, arguments: { ids: [s.id] } })) as {
    structuredContent: { jobs: { status: string }[] };
  };
  return { outcome, result, row, polled: polled.structuredContent.jobs[0]!.status };
}

async function endOneWindow(how: Exit): Promise<Map<string, Seen | Error>> {
  const cases = CASES.filter((c) => !(c.provider === "gemini" && skipBwrap));
  const seen = new Map<string, Seen | Error>();
  const first = await connectTaskDl(env, { cwd: root });
  const started = await Promise.all(
    cases.map((c) => startJob(first, c, how).catch((e) => void seen.set(c.provider, failure(e)))),
  );
  const firstPid = first.io.proc.pid;
  await endServer(first.io.proc, how);
  await first.close();
  const live = started.filter((s): s is Started => s !== undefined);
  const afterEnd = live.map((s) => ({
    supervisorAliveAfterEnd: pidAlive(s.running.owner_pid!),
    // The change is still to be made: the job makes it with its window gone.
    gatedFileBeforeGate: s.c.gated ? existsSync(join(s.workdir, s.c.gated.file)) : null,
  }));
  for (const s of live) openGate(s.key, s.workdir);

  // A new window: it answers for the jobs another server started.
  const second = await connectTaskDl(env, { cwd: root });
  try {
    await Promise.all(
      live.map(async (s, i) => {
        try {
          const { kind, id, workdir, running } = s;
          seen.set(s.c.provider, {
            kind,
            id,
            workdir,
            firstPid,
            running,
            ...afterEnd[i]!,
            ...(await settleJob(second, s)),
          });
        } catch (e) {
          seen.set(s.c.provider, failure(e));
        }
      }),
    );
  } finally {
    await second.close();
  }
  return seen;
}

async function outlive(c: Case, how: Exit): Promise<void> {
  const s = (await windowEnding(how)).get(c.provider);
  if (s instanceof Error || s === undefined) throw s ?? new Error(`${c.provider}: no account of its job`);
  expect(s.kind).toBe("task");
  expect(s.running.owner_pid).not.toBe(s.firstPid);
  expect(s.supervisorAliveAfterEnd).toBe(true);
  if (c.gated) expect(s.gatedFileBeforeGate).toBe(false);
  expect(s.outcome.status).toBe("completed");
  expect(s.result.isError).toBeFalsy();
  expect(s.row.status).toBe("done");
  c.check(s.result.structuredContent, s.workdir, s.row);
  expect(s.polled).toBe("done");
  // Its supervisor ended with it.
  await until(() => !pidAlive(s.running.owner_pid!), "the supervisor to end with its job");
}

describe("a job outlives the server that started it", () => {
  for (const c of CASES) {
    const skip = c.provider === "gemini" && skipBwrap;
    for (const how of ["SIGKILL", "stdin closed", "Claude Code's exit"] as const) {
      test.skipIf(skip)(
        `${c.provider}: the window ends by ${how}; the job runs to done and the next server settles its task`,
        async () => {
          await outlive(c, how);
        },
        90_000,
      );
    }
  }

  test("a closed window's queued job runs too: its server hands it to a supervisor of its own on the way out", async () => {
    const c = CASES[0]!;
    const workdir = makeRepo(root, "queued", 1);
    const first = await connectTaskDl(
      { ...env, DELEGATE_AGENT_MAX_CONCURRENT: "1", DELEGATE_AGENT_MAX_PER_PROJECT: "1" },
      { cwd: workdir.repo },
    );
    open.push(first);
    const ids: string[] = [];
    for (const tree of workdir.trees) {
      const [tool, args] = c.call(tree, "queued");
      const execution = await first.session.callTool(tool, args as never);
      ids.push(jobIdOf(execution.handle!.taskId));
    }
    await until(() => readRow(c.stateDir(), ids[0]!)?.status === "running", "the first job to run");
    expect(readRow(c.stateDir(), ids[1]!)?.status).toBe("queued");
    await endServer(first.io.proc, "Claude Code's exit");
    openGate("queued", workdir.repo);
    await until(() => ids.every((id) => readRow(c.stateDir(), id)?.status === "done"), "both jobs to end done", 60_000);
    for (const tree of workdir.trees) expect(existsSync(join(tree, "note.txt"))).toBe(true);
  }, 90_000);

  test("a killed window's queued jobs with no dl left on their store: dl wait hands them to supervisors, which keep the cap and the order", async () => {
    const stateDir = join(root, "agent-adrift");
    const caps = { DELEGATE_AGENT_MAX_CONCURRENT: "1", DELEGATE_AGENT_MAX_PER_PROJECT: "1" };
    const own = { ...env, ...caps, DELEGATE_AGENT_STATE_DIR: stateDir };
    const workdir = makeRepo(root, "adrift", 2);
    const first = await connectTaskDl(own, { cwd: workdir.repo });
    open.push(first);
    // The first job takes the one slot and never ends; the two after it queue in the server.
    const ids: string[] = [];
    for (const [i, tree] of workdir.trees.entries()) {
      const [tool, args] = CASES[0]!.call(tree, "adrift");
      const model = i === 0 ? BLOCKING_MODEL : "local-outlive";
      ids.push(jobIdOf((await first.session.callTool(tool, { ...args, model } as never)).handle!.taskId));
    }
    const [blocker, ...queued] = ids as [string, ...string[]];
    await until(() => readRow(stateDir, blocker)?.child_pid, "the first job to run");
    await until(() => queued.every((id) => readRow(stateDir, id)?.queue_reason === "global_cap"), "the rest to queue");
    const server = first.io.proc.pid;
    // The window is killed, and so is the only supervisor: no dl serves the store now.
    for (const pid of [server, supervisorOf(stateDir, blocker)]) {
      process.kill(pid, "SIGKILL");
      await until(() => !pidAlive(pid), `process ${pid} to die`);
    }
    expect(queued.map((id) => readRow(stateDir, id)!.owner_pid)).toEqual([server, server]);

    // dl jobs reads the queued ones as queued, saying who takes them over.
    const listed = JSON.parse((await runDl(["jobs", "--json"], own)).stdout) as {
      jobs: { id: string; state: string; reason: string; window: string }[];
    };
    for (const id of queued) {
      const job = listed.jobs.find((j) => j.id === id);
      expect(job).toMatchObject({ state: "queued", window: "closed" });
      expect(job!.reason).toContain("hand it to a supervisor of its own");
    }

    // The user's dl wait hands them to supervisors of their own, which end the blocker's
    // row (its supervisor died) and run them one at a time, oldest first.
    openGate("adrift", workdir.repo);
    const wait = await runDl(["wait", "--timeout", "60", ...queued], own);
    expect(wait.code).toBe(0);
    for (const id of queued) expect(wait.stdout).toContain(`${id} DONE`);
    const [a, b] = queued.map((id) => readRow(stateDir, id)!);
    for (const r of [a!, b!]) expect(r).toMatchObject({ status: "done", origin_pid: server });
    // The blocker's run died with its supervisor, or the first supervisor's reap stopped it.
    const ended = readRow(stateDir, blocker)!;
    expect(["killed_on_restart", "lost"]).toContain(ended.status);
    expect(a!.started_at!).toBeGreaterThanOrEqual(ended.ended_at!);
    expect(b!.started_at!).toBeGreaterThanOrEqual(a!.ended_at!);
    for (const tree of workdir.trees.slice(1))
      expect(readFileSync(join(tree, "note.txt"), "utf8")).toBe("written by the agent\n");
  }, 90_000);

  test("a later server of the project cancels, by tasks/cancel, a job another server started; dl logs --follow from a shell sees it end", async () => {
    const c = CASES[0]!;
    const workdir = makeRepo(root, "cancel-later", 0).repo;
    const first = await server(workdir);
    const [tool, args] = c.call(workdir, "cancel-later");
    const execution = await first.session.callTool(tool, { ...args, model: BLOCKING_MODEL } as never);
    const taskId = execution.handle!.taskId;
    const id = jobIdOf(taskId);
    const running = await runningUnderSupervisor(c, id);
    first.io.proc.kill("SIGKILL");
    await first.io.proc.exited;
    // A shell follows the job the closed window left running.
    const follow = Bun.spawn([requireBinary(), "logs", id, "--follow"], {
      env: testEnv(env),
      stdout: "pipe",
      stderr: "pipe",
    });
    const second = await server(workdir);
    await second.session.cancelTask(taskId as never);
    const ended = await until(() => {
      const r = readRow(c.stateDir(), id);
      return r && r.status !== "running" ? r : null;
    }, `${id} to end on the second server's tasks/cancel`);
    expect(ended.status).toBe("cancelled");
    expect(await follow.exited).toBe(0);
    expect(await new Response(follow.stderr).text()).toEndWith(`dl logs: ${id} ended cancelled\n`);
    await until(
      () => !pidAlive(running.child_pid!) && !pidAlive(running.owner_pid!),
      "its run and its supervisor to end",
    );
  }, 90_000);

  test("dl jobs says the job's window closed, the next server of the project says it still runs, dl wait sees it end", async () => {
    const c = CASES[0]!;
    const workdir = makeRepo(root, "shell-view", 0).repo;
    const first = await server(workdir);
    const [tool, args] = c.call(workdir, "shell-view");
    const execution = await first.session.callTool(tool, args as never);
    const id = jobIdOf(execution.handle!.taskId);
    await until(() => readRow(c.stateDir(), id)?.status === "running", `${id} to run`);
    first.io.proc.kill("SIGKILL");
    await first.io.proc.exited;
    const listed = await runDl(["jobs", "--json"], env);
    const mine = (JSON.parse(listed.stdout) as { jobs: { id: string; window: string }[] }).jobs.find(
      (j) => j.id === id,
    );
    expect(mine?.window).toBe("closed");
    // The next server of the project says so, naming it.
    const next = await server(workdir);
    await until(() => next.io.stderr.includes("from a closed window still run"), "the next server to say it");
    expect(next.io.stderr).toContain(id);
    openGate("shell-view", workdir);
    const wait = await runDl(["wait", id], env);
    expect(wait.code).toBe(0);
    expect(wait.stdout).toContain(id);
    expect(existsSync(join(workdir, "note.txt"))).toBe(true);
  }, 90_000);
});
