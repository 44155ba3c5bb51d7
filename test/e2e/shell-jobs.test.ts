import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selfOwner } from "../../src/jobs/engine/machine.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { NewJob } from "../../src/store/types.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";
import { pidAlive } from "../helpers/proc.ts";
import { childRecorded, supervisorOf } from "../helpers/supervisor.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * dl jobs, show, logs and cancel through dist/dl, on jobs of all four kinds: rows in each
 * provider's store as their servers write them, and a real agent job run by dl serve
 * against the scripted fake model, cancelled from the shell through its own server.
 */
const KEY = "sk-shell-jobs-secret-0000";
let root: string;
let repo: string;
let project: string;
let fake: FakeModel;
let session: DlSession;
const dirs: Record<string, string> = {};
// Its own user cache: the stores registry there lists this file's servers only, not the suite's.
const env = () => ({
  XDG_CACHE_HOME: join(root, "cache"),
  DELEGATE_CODEX_STATE_DIR: dirs.codex,
  DELEGATE_GEMINI_STATE_DIR: dirs.gemini,
  DELEGATE_DSH_STATE_DIR: dirs.dsh,
  DELEGATE_AGENT_STATE_DIR: dirs.agent,
});

async function dl(args: string[], cwd = repo): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([requireBinary(), ...args], { env: testEnv(env()), cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

const ID = { codex: "cx-00000c0de1", gemini: "gm-00000c0de2", dsh: "dsh-00000c0de3", agent: "ag-00000c0de4" };
const QUEUED = { codex: "cx-00000000b1", gemini: "gm-00000000b2", dsh: "dsh-00000000b3", agent: "ag-00000000b4" };
const FAILED = { codex: "cx-00000000f1", gemini: "gm-00000000f2", dsh: "dsh-00000000f3", agent: "ag-00000000f4" };

function seed(provider: keyof typeof ID): void {
  const me = selfOwner();
  const base = (id: string, over: Partial<NewJob> = {}): NewJob => ({
    id,
    provider,
    project,
    workdir: repo,
    workspace_root: repo,
    task: "t",
    created_at: Date.now() - 60_000,
    owner_pid: me.pid,
    owner_start: me.startTime,
    server_id: "srv-test",
    model: provider === "agent" ? null : `${provider}-model`,
    params: provider === "agent" ? '{"agent_name":"helper"}' : null,
    ...over,
  });
  const s = JobStore.open(dirs[provider]!);
  // The done and failed ones ran before they ended (store/transitions.ts).
  const ran = { status: "running" as const };
  s.insertMany([base(ID[provider], ran), base(FAILED[provider], ran), base(QUEUED[provider])]);
  s.update(ID[provider], {
    status: "done",
    exit_code: 0,
    started_at: Date.now() - 50_000,
    ended_at: Date.now() - 40_000,
    final_response: `the ${provider} answer`,
  });
  s.update(FAILED[provider], {
    status: "failed",
    exit_code: 1,
    failure_kind: "other",
    ended_at: Date.now(),
  });
  s.close();
}

beforeAll(async () => {
  requireBinary();
  root = tempDir("shell-jobs");
  repo = makeRepo(root, "repo").repo;
  project = realpathSync(join(repo, ".git"));
  for (const p of ["codex", "gemini", "dsh", "agent"]) dirs[p] = join(root, `${p}-state`);
  for (const p of Object.keys(ID) as (keyof typeof ID)[]) seed(p);
  // What a CLI job's run left (its output tail) and what an agent job's child recorded.
  mkdirSync(join(dirs.codex!, "jobs", ID.codex), { recursive: true });
  writeFileSync(
    join(dirs.codex!, "jobs", ID.codex, "output.log"),
    [
      "--- stdout ---",
      '{"type":"thread.started","thread_id":"th-1"}',
      '{"type":"turn.started"}',
      '{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"npm test","exit_code":1}}',
      '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"tests fail"}}',
      '{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":800,"output_tokens":50}}',
      "--- exit 0 ---",
      "",
    ].join("\n"),
  );
  mkdirSync(join(dirs.agent!, "jobs", ID.agent), { recursive: true });
  const steps = [
    { t: "turn", n: 1, model: "m", in: 10, cached: 0, out: 5, stop: "tool_use", ms: 12 },
    { t: "tool", n: 1, tool: "run_bash", target: "npm test", exit: 1, bytes_in: 20, bytes_out: 300, ms: 40 },
  ];
  writeFileSync(
    join(dirs.agent!, "jobs", ID.agent, "transcript.jsonl"),
    `${steps.map((s) => JSON.stringify(s)).join("\n")}\n`,
  );
  fake = await startFakeModel({ apiKey: KEY });
  const agentsDir = join(root, "agents");
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
  session = await connectDl({
    ...env(),
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

describe("dl jobs / show / logs / cancel", () => {
  test("dl jobs lists every kind newest first, with filters and --json", async () => {
    const all = await dl(["jobs", "--json", "--limit", "100"]);
    expect(all.code).toBe(0);
    const jobs = JSON.parse(all.out).jobs as { id: string; kind: string; state: string }[];
    for (const id of Object.values(ID)) expect(jobs.map((j) => j.id)).toContain(id);
    const text = await dl(["jobs"]);
    expect(text.out.split("\n")[0]).toMatch(/^ID +KIND +STATE +PROJECT +RUNS ON +CREATED +DURATION$/);
    // Human times: how long ago for recent ones; the agent job names its agent and the model it runs on.
    expect(text.out).toMatch(new RegExp(`${ID.dsh} +dsh +done +repo +dsh-model +\\d+m\\d\\ds ago +10s`));
    expect(text.out).toMatch(
      new RegExp(`${ID.agent} +agent +done +repo +agent helper on local-qwen-3-6-35b +\\d+m\\d\\ds ago`),
    );
    expect(text.out).not.toMatch(/\d{4}-\d\d-\d\dT/);
    const done = JSON.parse((await dl(["jobs", "--json", "--status", "done", "--kind", "gemini"])).out).jobs;
    expect(done.map((j: { id: string }) => j.id)).toEqual([ID.gemini]);
    const bad = await dl(["jobs", "--status", "finished"]);
    expect(bad.code).toBe(2);
  });

  test("dl show gives the poll view, timings, outcome and files of each kind", async () => {
    for (const [kind, id] of Object.entries(ID)) {
      const r = await dl(["show", id, "--json"]);
      expect(r.code).toBe(0);
      const v = JSON.parse(r.out);
      expect(v).toMatchObject({ id, kind, state: "done", outcome: { status: "done", exit_code: 0 } });
      expect(v.poll.final_response).toBe(`the ${kind} answer`);
      expect(v.timings.started_at).toMatch(/^\d{4}-/);
      expect(v.files.dir).toBe(join(dirs[kind]!, "jobs", id));
    }
    const text = await dl(["show", ID.codex]);
    expect(text.out).toContain("output.log");
    expect(text.out).toContain(`next      dl logs ${ID.codex}`);
    expect(text.out).toMatch(/created +\d+m\d\ds ago/);
    expect(text.out).not.toMatch(/\d{4}-\d\d-\d\dT|\.\d{3}Z/);
    // An agent job that named no model: the one its run uses, never "-".
    const ag = await dl(["show", ID.agent]);
    expect(ag.out).toContain("runs on   agent helper, model local-qwen-3-6-35b (the default for this agent)");
    expect((await dl(["show", "cx-0123456789"])).code).toBe(2);
    expect((await dl(["show", "nope"])).err).toContain("is neither a job id nor a delegation id");
  });

  test("dl logs prints a transcript, a CLI's output tail, or the answer", async () => {
    const ag = await dl(["logs", ID.agent]);
    expect(ag.code).toBe(0);
    expect(ag.out).toContain("run_bash  npm test  exit 1");
    // A Codex job's event stream reads as steps, as an agent job's transcript does.
    const cx = (await dl(["logs", ID.codex])).out;
    expect(cx).toContain("session th-1\nturn 1\n  command  npm test  exit 1\n  message  tests fail\n");
    expect(cx).toContain("turn 1 done  in 1200 (cached 800)  out 50");
    expect(cx).not.toContain('{"type"');
    expect((await dl(["logs", ID.codex, "--json"])).out).toContain('\\"type\\":\\"turn.completed\\"');
    expect((await dl(["logs", ID.dsh])).out).toContain("the dsh answer");
    expect((await dl(["logs", ID.gemini, "--json"])).out).toContain('"final_response":"the gemini answer"');
  });

  test("dl logs --follow on a running agent job says so, prints each step as it ends, and stops with the job", async () => {
    fake.reset();
    const answer = Promise.withResolvers<void>();
    fake.script(reply.tool("list_files", { path: "." }), async () => {
      await answer.promise;
      return reply.text("followed to the end");
    });
    // A project of its own: the seeded jobs hold this file's repo.
    const workdir = makeRepo(root, "follow").repo;
    const sub = await callTool<{ jobs: { id: string }[] }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "List, then answer.", workdir }],
    });
    const id = sub.data.jobs[0]!.id;
    const p = Bun.spawn([requireBinary(), "logs", id, "--follow"], {
      env: testEnv(env()),
      cwd: repo,
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = lineReader(p.stdout);
    // The first step prints while the job still runs: its second turn waits for `answer`.
    let line = await out();
    while (line !== null && !line.includes("list_files")) line = await out();
    expect(line).toContain("list_files");
    answer.resolve();
    const rest: string[] = [];
    for (let l = await out(); l !== null; l = await out()) rest.push(l);
    expect(await p.exited).toBe(0);
    expect(rest.join("\n")).toMatch(/end: \d+ step/);
    expect(await new Response(p.stderr).text()).toMatch(
      new RegExp(
        `^dl logs: ${id} is (queued|running); following it until it ends: each step prints as it ends; Ctrl-C stops\ndl logs: ${id} ended done\n$`,
      ),
    );
  }, 60_000);

  test("a delegation (no job row) is listed by dl jobs and shown by dl show, as dl logs reads it", async () => {
    fake.always(reply.text("delegated answer", { usage: { input: 1500, output: 40, cacheRead: 1000 } }));
    const res = await callTool<{ success: boolean; logs: string }>(session, "delegate_to_local_agent", {
      agent_name: "helper",
      task: "Answer.",
      workdir: repo,
    });
    expect(res.data.success).toBe(true);
    const id = res.data.logs.replace("dl logs ", "");
    const listed = JSON.parse((await dl(["jobs", "--kind", "delegation", "--json"])).out).jobs;
    expect(listed[0]).toMatchObject({ id, kind: "delegation", tool: "delegate_to_local_agent", state: "done" });
    expect((await dl(["jobs"])).out).toMatch(new RegExp(`${id} +delegation +done +repo +delegate_to_local_agent on `));
    const shown = await dl(["show", id]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`${id}  delegation (delegate_to_local_agent)  done`);
    expect(shown.out).toMatch(/usage +1\.5k in \(1\.0k cached\), 40 out/);
    expect(shown.out).toContain(`next      dl logs ${id}`);
    expect(JSON.parse((await dl(["show", id, "--json"])).out).ended_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const missing = await dl(["show", "dg-0000000000"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("dl jobs --kind delegation lists them");
  });

  test("dl cancel ends a queued job of each kind; a finished one is left as it is", async () => {
    const r = await dl(["cancel", ...Object.values(QUEUED), ID.codex]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    for (const id of Object.values(QUEUED)) expect(r.out).toContain(`${id} CANCELLED`);
    expect(r.out).toContain(`${ID.codex} DONE (already finished)`);
  });

  test("another project's live job is refused, and nothing is cancelled", async () => {
    const other = makeRepo(root, "other").repo;
    const s = JobStore.open(dirs.dsh!);
    const me = selfOwner();
    s.insertMany([
      {
        id: "dsh-000000f0e1",
        provider: "dsh",
        project,
        workdir: repo,
        workspace_root: repo,
        task: "t",
        created_at: Date.now(),
        owner_pid: me.pid,
        owner_start: me.startTime,
      },
    ]);
    s.close();
    const r = await dl(["cancel", "dsh-000000f0e1"], other);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`belongs to the project ${project}`);
    // The refusal names the command that does it, from where it may be done.
    expect(r.err).toContain(`cancel it from its project: cd ${repo} && dl cancel dsh-000000f0e1`);
    expect(r.err).not.toContain("session's project");
    const again = JobStore.open(dirs.dsh!);
    expect(again.get("dsh-000000f0e1")?.status).toBe("queued");
    again.close();
  });

  test("a running agent job of a live server is cancelled through that server", async () => {
    fake.always(reply.hang());
    const sub = await callTool<{ jobs: { id: string }[] }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "Wait.", workdir: repo }],
    });
    const id = sub.data.jobs[0]!.id;
    await until(async () => fake.inFlight() === 1, "the agent to reach the backend", 30_000);
    const r = await dl(["cancel", id]);
    expect(r.out).toContain(`${id} CANCELLED`);
    expect(r.code).toBe(0);
    await until(async () => fake.inFlight() === 0, "the cancelled agent's request to close", 30_000);
  }, 60_000);

  test("an orphaned job reads the same in dl wait, jobs, show, poll, status and reap --dry-run; reap does what they said", async () => {
    const orphanDir = join(root, "orphan-agent-state");
    const agentsDir = join(root, "agents");
    const doomed = await connectDl({
      XDG_CACHE_HOME: join(root, "cache"),
      DELEGATE_AGENT_STATE_DIR: orphanDir,
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: KEY,
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    });
    fake.always(reply.hang());
    const sub = await callTool<{ jobs: { id: string }[] }>(doomed, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "Wait.", workdir: makeRepo(root, "orphan").repo }],
    });
    const id = sub.data.jobs[0]!.id;
    await until(async () => fake.inFlight() === 1, "the agent to reach the backend", 30_000);
    await childRecorded(orphanDir, id);
    // An orphan is a job whose supervisor died; with its server gone too, nobody reaps it before we look.
    for (const pid of [supervisorOf(orphanDir, id), doomed.transport.pid!]) {
      process.kill(pid, "SIGKILL");
      await until(() => !pidAlive(pid), `process ${pid} to die`);
    }
    const story = "dl reap will stop the child and record killed_on_restart";
    // From a shell without the server's settings: the registry points at its store.
    const clean = (args: string[]) => dl(args, root);
    const wait = await clean(["wait", id]);
    expect(wait.code).toBe(1);
    expect(wait.out).toContain(`${id} KILLED_ON_RESTART`);
    expect(wait.out).toContain(story);
    const listed = JSON.parse((await clean(["jobs", "--json", "--status", "orphaned"])).out).jobs;
    expect(listed).toEqual([
      expect.objectContaining({
        id,
        state: "killed_on_restart",
        status: "running",
        reason: expect.stringContaining(story),
      }),
    ]);
    const shown = JSON.parse((await clean(["show", id, "--json"])).out);
    expect(shown).toMatchObject({ state: "killed_on_restart", reason: expect.stringContaining(story) });
    expect(shown.poll.status).toBe("killed_on_restart"); // the MCP poll view reads the same
    const status = JSON.parse((await clean(["status", "--json"])).out);
    const active = status.jobs.flatMap((j: { active: { id: string }[] }) => j.active);
    expect(active).toContainEqual(
      expect.objectContaining({
        id,
        state: "killed_on_restart",
        orphaned: true,
        reason: expect.stringContaining(story),
      }),
    );
    const dry = await clean(["reap", "--dry-run"]);
    expect(dry.out).toContain(`${id} → killed_on_restart`);
    expect(dry.out).toContain("would stop the child and record killed_on_restart");
    const real = await clean(["reap"]);
    expect(real.out).toContain(`${id} → killed_on_restart`);
    expect(real.out).toContain("the child was stopped, recorded killed_on_restart");
    expect(JSON.parse((await clean(["show", id, "--json"])).out).state).toBe("killed_on_restart");
    await until(async () => fake.inFlight() === 0, "the orphan's request to close", 30_000);
  }, 90_000);
});
