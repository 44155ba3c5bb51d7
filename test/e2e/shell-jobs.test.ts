import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selfOwner } from "../../src/jobs/engine/machine.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { NewJob } from "../../src/store/types.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { pidAlive } from "../helpers/proc.ts";
import { supervisorOf } from "../helpers/supervisor.ts";
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
  s.insertMany([base(ID[provider]), base(FAILED[provider], {}), base(QUEUED[provider])]);
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
    '--- stdout ---\n{"type":"turn.completed"}\n--- exit 0 ---\n',
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
    expect(text.out.split("\n")[0]).toMatch(/^ID +KIND +STATE +PROJECT +MODEL\/AGENT +AGE +DURATION$/);
    expect(text.out).toMatch(new RegExp(`${ID.dsh} +dsh +done +repo +dsh-model +\\d+m\\d+s +10s`));
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
    expect(text.out).toContain(`logs      dl logs ${ID.codex}`);
    expect((await dl(["show", "cx-0123456789"])).code).toBe(2);
    expect((await dl(["show", "nope"])).err).toContain("is not a job id");
  });

  test("dl logs prints a transcript, a CLI's output tail, or the answer", async () => {
    const ag = await dl(["logs", ID.agent]);
    expect(ag.code).toBe(0);
    expect(ag.out).toContain("run_bash  npm test  exit 1");
    expect((await dl(["logs", ID.codex])).out).toContain('{"type":"turn.completed"}');
    expect((await dl(["logs", ID.dsh])).out).toContain("the dsh answer");
    expect((await dl(["logs", ID.gemini, "--json"])).out).toContain('"final_response":"the gemini answer"');
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
    expect(r.err).toContain(`belongs to project ${project}`);
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
