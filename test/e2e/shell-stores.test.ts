import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * The watch command dl hands back runs in the host's shell, where the DELEGATE_*_STATE_DIR
 * of the host's MCP config are not set: every `dl serve` records its stores in one
 * per-user place that the shell commands read.
 */
const KEY = "sk-shell-stores-secret";
let fake: FakeModel;
let root: string;
let session: DlSession;
let stateDir: string;
/** What the user's shell and the host share: HOME and the XDG dirs (this file's own cache), never the state dirs. */
const user = () => ({ XDG_CACHE_HOME: join(root, "cache") });

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("shell-stores");
  const agentsDir = join(root, "agents");
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
  stateDir = join(root, "moved-agent-state");
  session = await connectDl({
    ...user(),
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_AGENT_STATE_DIR: stateDir,
    DELEGATE_CODEX_STATE_DIR: join(root, "moved-codex-state"),
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

describe("the watch command finds its stores", () => {
  test("a submit made with state dirs set only in the server's env: its watch exits 0 from a clean env", async () => {
    fake.always(reply.text("all done"));
    const repo = makeRepo(root, "repo").repo;
    const sub = await callTool<{ jobs: { id: string }[]; watch: string }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "Say done.", workdir: repo }],
    });
    expect(sub.isError).toBeFalsy();
    const id = sub.data.jobs[0]!.id;
    const [cmd, ...args] = sub.data.watch.split(" ");
    expect(cmd).toBe(requireBinary());
    // The clean env: the suite's HOME and XDG dirs, no DELEGATE_*_STATE_DIR at all.
    const wait = await runDl([...args, "--timeout", "50"], user());
    expect(wait.stderr).toBe("");
    expect(wait.code).toBe(0);
    expect(wait.stdout).toContain(`${id} DONE`);
    const jobs = await until(async () => {
      const r = await runDl(["status", "--json"], user());
      return r.stdout.includes(id) || r.stdout.includes('"agent"') ? r : null;
    }, "dl status to answer");
    expect(JSON.parse(jobs.stdout).jobs.length).toBeGreaterThan(4); // the defaults and the moved ones
  }, 60_000);

  test("a malformed id is refused at once with the id shapes (exit 2)", async () => {
    const t0 = performance.now();
    const r = await runDl(["wait", "--timeout", "20", "cx-nope"], user());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is not a job id");
    for (const prefix of ["cx-", "gm-", "dsh-", "ag-"]) expect(r.stderr).toContain(prefix);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  test("a hostile registry entry (FIFO, link to /dev/zero, relative path) is skipped, never blocks", async () => {
    const dir = join(root, "cache", "claude-delegate-local", "stores");
    expect(readdirSync(dir).length).toBeGreaterThan(0); // the server above recorded its stores
    Bun.spawnSync(["mkfifo", join(dir, "fifo.json")]);
    symlinkSync("/dev/zero", join(dir, "zero.json"));
    writeFileSync(join(dir, "relative.json"), JSON.stringify({ provider: "codex", state_dir: "rel/dir" }));
    const r = await runDl(["wait", "--timeout", "1", "cx-0123456789"], user());
    expect(r.code).toBe(3); // a well-formed id not seen yet: the timeout, not a hang
    const st = await runDl(["status", "--json"], user());
    expect(JSON.parse(st.stdout).jobs.some((j: { provider: string }) => j.provider === "agent")).toBe(true);
  }, 30_000);
});
