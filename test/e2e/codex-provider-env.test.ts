import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { CODEX_BIN, makeCodexHome, markerRouter } from "../helpers/codex-home.ts";
import { callTool, type DlSession, runDl, sessionPool, tempDir } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * A Codex custom provider (Azure, a proxy) whose config.toml says `env_key =
 * "SOMETHING_KEY"`: the real CLI from npm, through dist/dl serve, against the fake
 * Responses server. DELEGATE_CODEX_ENV_PASSTHROUGH hands the key to the Codex child
 * only; without it the job fails as a configuration error naming the variable, and the
 * account is not paused.
 */
const KEY_VAR = "SOMETHING_KEY";
const KEY_VALUE = "sk-azure-not-a-real-key-4711";
let fake: FakeResponses;
let root: string;
const sessions = sessionPool();

type JobView = { id: string; status: string; failure_kind?: string | null; final_response?: string | null };
type Account = { state: string };

function serveEnv(tag: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CODEX_HOME: makeCodexHome(join(root, `codex-home-${tag}`), fake.baseUrl, KEY_VAR),
    DELEGATE_CODEX_BIN: CODEX_BIN,
    DELEGATE_CODEX_STATE_DIR: join(root, `state-${tag}`),
    DELEGATE_CODEX_STAGGER_S: "0",
    [KEY_VAR]: KEY_VALUE,
    ...extra,
  };
}

async function call<T>(s: DlSession, name: string, args: Record<string, unknown>): Promise<T> {
  return (await callTool<T>(s, name, args)).data;
}

const serve = (env: Record<string, string>) => sessions.serve(env);

/** The files under `dir` (the store, its WAL, job folders, output tails) that hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && readFileSync(join(e.parentPath, e.name), "latin1").includes(needle))
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

beforeAll(() => {
  const markers = markerRouter();
  // [echokey]: a proxy that quotes the key it was sent in its answer, as an auth error might.
  fake = startFakeResponses((req) =>
    req.prompt.includes("[echokey]")
      ? { kind: "ok", text: `proxy: the key ${req.authorization?.replace(/^Bearer /, "")} is on a trial plan` }
      : markers(req),
  );
  root = tempDir("codex-provider-env");
});
afterAll(async () => {
  await sessions.closeAll();
  await fake?.stop();
});

describe("DELEGATE_CODEX_ENV_PASSTHROUGH with the real Codex CLI", () => {
  test("the provider key named there reaches Codex (and only Codex): the job is done", async () => {
    const env = serveEnv("pass", { DELEGATE_CODEX_ENV_PASSTHROUGH: KEY_VAR });
    const s = await serve(env);
    const repo = makeRepo(root, "pass", 0).repo;
    const r = await call<JobView>(s, "delegate_to_codex", { task: "[slow:10:pass] hello", workdir: repo });
    expect(r.status).toBe("done");
    const seen = fake.requests.find((q) => q.prompt.includes("[slow:10:pass]"));
    expect(seen?.authorization).toBe(`Bearer ${KEY_VALUE}`);
    // dl status shows the name it passes, never the value.
    const st = await runDl(["status", "--json"], env);
    expect(st.stdout).toContain(KEY_VAR);
    expect(st.stdout).not.toContain(KEY_VALUE);
    expect(st.stderr).not.toContain(KEY_VALUE);
  }, 120_000);

  test("a run that prints the passed key has it cut from the answer, the store and the job's files", async () => {
    const env = serveEnv("echo", { DELEGATE_CODEX_ENV_PASSTHROUGH: KEY_VAR });
    const s = await serve(env);
    const repo = makeRepo(root, "echo", 0).repo;
    const r = await call<JobView>(s, "delegate_to_codex", { task: "[echokey] hello", workdir: repo });
    expect(r.status).toBe("done");
    expect(fake.requests.find((q) => q.prompt.includes("[echokey]"))?.authorization).toBe(`Bearer ${KEY_VALUE}`);
    expect(r.final_response).toContain("proxy: the key <redacted> is on a trial plan");
    expect(JSON.stringify(r)).not.toContain(KEY_VALUE);
    // dl's own records (the store and its WAL, outcome.json, output.log) hold no key. What
    // Codex itself wrote in the job folder (its -o file, its per-run sqlite home) is the
    // CLI's, kept as it wrote it until dl reap removes the folder.
    const held = filesHolding(join(root, "state-echo"), KEY_VALUE);
    expect(held.filter((f) => !/^jobs\/cx-[0-9a-f]+\/(last-message\.txt|sqlite\/)/.test(f))).toEqual([]);
    const logs = await runDl(["logs", r.id], env);
    expect(logs.stdout + logs.stderr).not.toContain(KEY_VALUE);
  }, 120_000);

  test("the agent passthrough still refuses a credential-looking name", async () => {
    const r = await runDl(["status", "--json"], serveEnv("agent", { DELEGATE_ENV_PASSTHROUGH: KEY_VAR }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("DELEGATE_ENV_PASSTHROUGH");
    expect(r.stderr).not.toContain(KEY_VALUE);
  });

  test("without it the job fails as a configuration error naming the variable; the account is not paused", async () => {
    const s = await serve(serveEnv("missing"));
    const repo = makeRepo(root, "missing", 1);
    const first = await call<JobView>(s, "delegate_to_codex", { task: "[slow:10:m1] hello", workdir: repo.repo });
    expect(first).toMatchObject({ status: "failed", failure_kind: "config" });
    expect(first.final_response).toContain(KEY_VAR);
    expect(first.final_response).toContain("DELEGATE_CODEX_ENV_PASSTHROUGH");
    // A queued job after it still starts (an auth pause would hold it as auth_failed).
    const sub = await call<{ jobs: { id: string }[]; account: Account }>(s, "submit_codex", {
      tasks: [{ task: "[slow:10:m2] again", workdir: repo.trees[1] }],
    });
    expect(sub.account.state).toBe("ok");
    const id = sub.jobs[0]!.id;
    const wait = await runDl(["wait", id], { DELEGATE_CODEX_STATE_DIR: join(root, "state-missing") });
    expect(wait.stdout).toContain(id);
    const polled = await call<{ jobs: JobView[]; account: Account }>(s, "poll_codex", { ids: [id] });
    expect(polled.jobs[0]).toMatchObject({ status: "failed", failure_kind: "config" });
    expect(polled.account.state).toBe("ok");
  }, 120_000);
});
