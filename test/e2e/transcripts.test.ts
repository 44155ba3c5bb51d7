import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Every delegation records its steps: a scripted agent reads a file, writes one and runs a
 * command; the transcript `dl logs` prints names each path, the command and each exit
 * code, with the tokens of every turn; keys never reach the file; the file is 0600.
 */
const KEY = "sk-transcript-key-0123456789";
const PASTED = "sk-pasted-by-model-abcdef0123";
let fake: FakeModel;
let root: string;
let stateDir: string;
let session: DlSession;
/** This file's own user cache: its stores registry lists this file's server only. */
const shell = (extra: Record<string, string> = {}) => ({
  XDG_CACHE_HOME: join(root, "cache"),
  // The suite's default agent store holds other files' runs: point the shell at this one.
  DELEGATE_AGENT_STATE_DIR: stateDir,
  ...extra,
});

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("transcripts");
  stateDir = join(root, "agent-state");
  const agentsDir = join(root, "agents");
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
  session = await connectDl({
    ...shell(),
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_AGENT_STATE_DIR: stateDir,
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

function scriptThreeTools(): void {
  fake.script(
    reply.tool("read_file", { path: "README" }, { usage: { input: 120, cacheRead: 80, output: 9 } }),
    reply.tool("write_file", { path: "notes/todo.txt", content: "remember" }),
    reply.tool("run_bash", { command: `echo ${PASTED}; exit 4` }),
    reply.text("done", { usage: { input: 300, cacheRead: 200, output: 4 } }),
  );
}

function expectThreeSteps(out: string): void {
  expect(out).toMatch(/read_file {2}README {2}exit 0/);
  expect(out).toMatch(/write_file {2}notes\/todo\.txt {2}exit 0/);
  expect(out).toMatch(/run_bash {2}echo <redacted>; exit 4 {2}exit 4/);
  expect(out).toMatch(/turn 1 {2}\S+ {2}in 120 \(cached 80\) {2}out 9 {2}stop tool_use/);
  expect(out).toMatch(/turn 4 .*stop end_turn/);
  expect(out).not.toContain(PASTED);
  expect(out).not.toContain(KEY);
}

describe("transcripts", () => {
  test("dl run against DELEGATE_RUN_PROVIDER_*: that endpoint's key reaches no transcript, progress line or status", async () => {
    // Not key-shaped, so only dl knowing it is its key can keep it out.
    const runKey = "plain-run-provider-secret-4711";
    const other = await startFakeModel({ apiKey: runKey });
    try {
      other.script(reply.tool("run_bash", { command: `echo ${runKey}` }), reply.text("done"));
      const repo = makeRepo(root, "run-provider").repo;
      const env = shell({
        DELEGATE_LOCAL_URL: fake.anthropicUrl,
        DELEGATE_LOCAL_AGENTS_DIR: join(root, "agents"),
        // Its own store: the submit_agent test below counts the ledger's kinds.
        DELEGATE_AGENT_STATE_DIR: join(root, "run-provider-state"),
        DELEGATE_RUN_PROVIDER_URL: other.anthropicUrl,
        DELEGATE_RUN_PROVIDER_KEY: runKey,
        DELEGATE_PROVIDER_ALLOW_HOSTS: "127.0.0.1",
      });
      const run = await runDl(["run", "helper", "echo the key", "--workdir", repo, "--json"], env);
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout) as { logs: string };
      const logs = await runDl(result.logs.split(" ").slice(1), env);
      expect(logs.stdout).toMatch(/run_bash {2}echo <redacted>/);
      expect(logs.stdout + logs.stderr + run.stderr).not.toContain(runKey);
      const status = await runDl(["status", "--json"], env);
      expect(status.stdout + status.stderr).not.toContain(runKey);
    } finally {
      await other.stop();
    }
  }, 60_000);

  test("delegate_to_local_agent: the result says how many steps and how to read them; dl logs lists every call", async () => {
    scriptThreeTools();
    const repo = makeRepo(root, "sync").repo;
    const seen: string[] = [];
    const res = (await session.client.callTool(
      { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "three steps", workdir: repo } },
      { timeout: 120_000, onprogress: (p: { message?: string }) => void seen.push(p.message ?? "") },
    )) as unknown as { structuredContent: { steps: number; logs: string; success: boolean } };
    const r = res.structuredContent;
    expect(r.steps).toBe(7); // four turns, three tool calls
    expect(r.logs).toMatch(/^dl logs dg-[0-9a-f]{10}$/);
    // Progress names the path or command, not only the tool.
    expect(seen.join("\n")).toContain("read_file README");
    expect(seen.join("\n")).toContain("run_bash echo <redacted>; exit 4 (exit 4)");
    const logs = await runDl(r.logs.split(" ").slice(1), shell());
    expect(logs.code).toBe(0);
    expectThreeSteps(logs.stdout);
    const dir = join(stateDir, "delegations");
    const file = join(dir, readdirSync(dir).find((n) => r.logs.endsWith(n.replace(".jsonl", "")))!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).not.toContain(PASTED);
  }, 60_000);

  test("submit_agent: the job's transcript is dl logs <job id>, and poll_agent says so", async () => {
    scriptThreeTools();
    const repo = makeRepo(root, "job").repo;
    const sub = await callTool<{ jobs: { id: string }[] }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "three steps", workdir: repo }],
    });
    const id = sub.data.jobs[0]!.id;
    const job = await until(
      async () => {
        const p = await callTool<{ jobs: { status: string; steps: number; logs: string }[] }>(session, "poll_agent", {
          ids: [id],
        });
        return p.data.jobs[0]!.status === "done" ? p.data.jobs[0]! : null;
      },
      "the job to finish",
      60_000,
    );
    expect(job.steps).toBe(7);
    expect(job.logs).toBe(`dl logs ${id}`);
    const logs = await runDl(["logs", id], shell());
    expectThreeSteps(logs.stdout);
    expect(statSync(join(stateDir, "jobs", id, "transcript.jsonl")).mode & 0o777).toBe(0o600);
    // The job's usage is in the ledger once, as the job (its child does not count it again).
    const usage = JSON.parse((await runDl(["usage", "--json", "--by", "kind"], shell())).stdout);
    const kinds = new Map(usage.groups.map((g: { key: string; runs: number }) => [g.key, g]));
    expect(kinds.get("agent")).toMatchObject({
      runs: 1,
      cache_read_tokens: 280,
      cost: { state: "unknown", usd: null },
    });
    expect(kinds.has("dl_run")).toBe(false);
  }, 90_000);

  test("delegate_batch: each task has its own transcript", async () => {
    fake.always(reply.text("ok"));
    const repo = makeRepo(root, "batch").repo;
    const res = await callTool<{ results: { logs: string; steps: number }[] }>(session, "delegate_batch", {
      tasks: [
        { agent_name: "helper", task: "a", workdir: repo },
        { agent_name: "helper", task: "b", workdir: repo },
      ],
    });
    const logs = res.data.results.map((x) => x.logs);
    expect(new Set(logs).size).toBe(2);
    for (const l of logs) {
      const r = await runDl(l.split(" ").slice(1), shell());
      expect(r.stdout).toContain("stop end_turn");
    }
  }, 60_000);

  test("dl reap prunes delegation transcripts older than the retention period", async () => {
    const dir = join(stateDir, "delegations");
    const [oldest, ...rest] = readdirSync(dir).map((n) => join(dir, n));
    const longAgo = Date.now() / 1000 - 400 * 86_400;
    utimesSync(oldest!, longAgo, longAgo);
    const dry = await runDl(["reap", "--dry-run", "--json"], shell({ DELEGATE_AGENT_STATE_DIR: stateDir }));
    expect(JSON.parse(dry.stdout).pruned_transcripts).toBe(1);
    expect(existsSync(oldest!)).toBe(true);
    await runDl(["reap"], shell({ DELEGATE_AGENT_STATE_DIR: stateDir }));
    expect(existsSync(oldest!)).toBe(false);
    for (const f of rest) expect(existsSync(f)).toBe(true);
  });

  test("dl logs --follow prints steps as a running job records them and returns when it ends", async () => {
    fake.script(
      reply.tool("run_bash", { command: "echo one" }, { delayMs: 300 }),
      reply.tool("read_file", { path: "README" }, { delayMs: 300 }),
      reply.text("done", { delayMs: 300 }),
    );
    const repo = makeRepo(root, "follow").repo;
    const sub = await callTool<{ jobs: { id: string }[] }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "follow me", workdir: repo }],
    });
    const id = sub.data.jobs[0]!.id;
    const follow = await runDl(["logs", id, "--follow"], shell({ DELEGATE_AGENT_STATE_DIR: stateDir }));
    expect(follow.code).toBe(0);
    expect(follow.stdout).toMatch(/run_bash {2}echo one {2}exit 0/);
    expect(follow.stdout).toMatch(/read_file {2}README {2}exit 0/);
    expect(follow.stdout).toContain("end: 5 step(s)");
    const row = await callTool<{ jobs: { status: string }[] }>(session, "poll_agent", { ids: [id] });
    expect(row.data.jobs[0]!.status).toBe("done");
  }, 60_000);
});
