import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * The secrets matrix: a distinctive value in every credential-looking variable, then
 * every channel dl writes to is searched for them: MCP results, the server's stderr,
 * `dl status --json`, `dl wait` lines, the SQLite rows and every other file of the state
 * dir, and the environments of the children dl starts (an agent's run_bash command, a
 * dsh launcher job). DELEGATE_LOCAL_KEY may go to its own backend and nowhere else.
 */
const MARK = "SXQ9";
const SECRETS: Record<string, string> = {
  DELEGATE_LOCAL_KEY: `lk-${MARK}-local`,
  OPENAI_API_KEY: `sk-${MARK}-openai`,
  ANTHROPIC_API_KEY: `sk-ant-${MARK}`,
  GEMINI_API_KEY: `gm-${MARK}-gemini`,
  GITHUB_TOKEN: `ghp_${MARK}_github`,
  AWS_SECRET_ACCESS_KEY: `aws-${MARK}-secret`,
  NPM_CONFIG_AUTH_TOKEN: `npm-${MARK}-token`,
  CODEX_API_KEY: `cx-${MARK}-codex`,
  MY_SERVICE_PASSWORD: `pw-${MARK}-service`,
  SESSION_COOKIE: `ck-${MARK}-cookie`,
  // ssh's `AcceptEnv LC_*` carries any LC_ name: only the locale's own names reach a child.
  LC_API_TOKEN: `lc-${MARK}-ssh-carried`,
};

let fake: FakeModel;
let s: DlSession;
let root: string;
let env: Record<string, string>;

/** A dsh launcher that records its environment in its run dir, then reports done. */
const LAUNCHER = `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --out-dir) out="$2"; shift 2 ;; *) shift 2 ;; esac; done
mkdir -p "$out"
env > "$out/env.txt"
printf '{"status":"done","rc":0,"diff_stat":"","summary":"env recorded","tokens":{"input":1,"output":1},"wall_s":0.1}\\n' > "$out/result.json"
`;

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: SECRETS.DELEGATE_LOCAL_KEY });
  root = tempDir("secrets");
  const agentsDir = join(root, "agents");
  const launcher = join(root, "launcher.sh");
  const modelsFile = join(root, "models.json");
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ntools: Read, Bash\n---\nHelp.\n");
  writeFileSync(launcher, LAUNCHER);
  chmodSync(launcher, 0o755);
  writeFileSync(modelsFile, JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }));
  env = {
    ...SECRETS,
    DELEGATE_ENV_PASSTHROUGH: "NPM_CONFIG_*,MY_*",
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_LOCAL_MODEL: "local-test-model",
    DELEGATE_DSH_LAUNCHER: launcher,
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_DSH_STATE_DIR: join(root, "dsh-state"),
    DELEGATE_CODEX_STATE_DIR: join(root, "codex-state"),
    DELEGATE_CACHE_DIR: join(root, "cache"),
  };
  s = await connectDl(env);
});
afterAll(async () => {
  await s?.close();
  await fake?.stop();
});

function leaks(where: string, text: string): string[] {
  return Object.entries(SECRETS)
    .filter(([, v]) => text.includes(v))
    .map(([k]) => `${k} in ${where}`);
}

/** Every file under `dir`, as bytes decoded leniently (SQLite pages included). */
function filesUnder(dir: string): [string, string][] {
  const out: [string, string][] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile()) out.push([p, readFileSync(p).toString("latin1")]);
  }
  return out;
}

describe("secrets matrix: no key in any output channel", () => {
  test("agent delegation: the run_bash child's environment, the MCP result and the model's view hold no key", async () => {
    const workdir = tempDir("secrets-work");
    fake.script(reply.tool("run_bash", { command: "env; echo ENV-DUMPED" }), reply.text("done"));
    const res = await s.client.callTool(
      { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "dump env", workdir } },
      { timeout: 60_000 },
    );
    const mcp = JSON.stringify(res);
    expect(mcp).toContain("done");
    // What the child printed went back to the model as the tool result.
    const toModel = JSON.stringify(fake.requests[1]?.body ?? "");
    expect(toModel).toContain("ENV-DUMPED");
    expect(toModel).toContain("PATH=");
    expect(toModel).not.toContain("NPM_CONFIG_AUTH_TOKEN");
    expect([...leaks("MCP result", mcp), ...leaks("run_bash child environment", toModel)]).toEqual([]);
    // The local key went to its own backend, as its credential, and only there.
    expect(fake.requests[0]?.headers?.["x-api-key"] ?? fake.requests[0]?.headers?.authorization).toContain(MARK);
  }, 60_000);

  test("dsh job: the launcher's environment, poll, dl wait, dl status --json, the rows and state files hold no key", async () => {
    const { repo } = makeRepo(root, "repo", 0);
    const sub = await s.client.callTool({
      name: "submit_dsh",
      arguments: { tasks: [{ task: "record the environment", model: "ds-flash", workdir: repo }] },
    });
    expect(sub.isError).toBeFalsy();
    const id = (sub.structuredContent as { jobs: { id: string }[] }).jobs[0]!.id;
    const poll = await until(async () => {
      const p = await s.client.callTool({ name: "poll_dsh", arguments: { ids: [id] } });
      return (p.structuredContent as { jobs: { status: string }[] }).jobs[0]!.status === "done" ? p : null;
    }, "the dsh job to end");
    const wait = await runDl(["wait", id], env);
    const status = await runDl(["status", "--json"], env);
    expect(wait.code).toBe(0);
    const childEnv = readFileSync(join(env.DELEGATE_DSH_STATE_DIR!, "jobs", id, "out", "env.txt"), "utf8");
    expect(childEnv).toContain("PATH=");
    const found = [
      ...leaks("poll_dsh result", JSON.stringify(poll)),
      ...leaks("dl wait output", wait.stdout + wait.stderr),
      ...leaks("dl status --json", status.stdout + status.stderr),
      ...leaks("the launcher's environment", childEnv),
      ...filesUnder(env.DELEGATE_DSH_STATE_DIR!).flatMap(([p, text]) => leaks(p, text)),
      ...filesUnder(join(root, "cache")).flatMap(([p, text]) => leaks(p, text)),
    ];
    expect(found).toEqual([]);
  }, 60_000);

  test("the server's stderr, at the end of it all, holds no key", () => {
    expect(leaks("dl serve stderr", s.stderr())).toEqual([]);
  });
});
