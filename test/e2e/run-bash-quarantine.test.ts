import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * An agent job (submit_agent, through dist/dl serve) whose scripted model runs a
 * sandboxed run_bash (DELEGATE_RUN_BASH_SANDBOX=1) that makes a new nested repository in
 * the work tree, its config naming a core.fsmonitor the host's next `git status` there
 * would run. The job fails jail_git_tampered naming it; the `.git` leaves the workdir for
 * the job's own folder (`quarantine/1/`, 0700, listed by dl show), and the host's git
 * status, in the workdir and in the nested folder, runs nothing.
 */
const KEY = "sk-run-bash-quarantine-key-0001";
let fake: FakeModel;
let root: string;
let stateDir: string;
let markers: string;
let session: DlSession;
const shell = () => ({ XDG_CACHE_HOME: join(root, "cache"), DELEGATE_AGENT_STATE_DIR: stateDir });

function hostGit(cwd: string, ...args: string[]): { code: number; out: string } {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root } });
  return { code: r.exitCode ?? -1, out: r.stdout.toString() + r.stderr.toString() };
}

describe.skipIf(skipBwrap)("run_bash sandbox in an agent job: a new .git goes to the job's folder", () => {
  beforeAll(async () => {
    requireBinary();
    fake = await startFakeModel({ apiKey: KEY });
    root = tempDir("bash-quarantine");
    stateDir = join(root, "agent-state");
    markers = join(root, "markers");
    mkdirSync(markers);
    const agentsDir = join(root, "agents");
    await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
    session = await connectDl({
      ...shell(),
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: KEY,
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
      DELEGATE_RUN_BASH_SANDBOX: "1",
    });
  }, 60_000);
  afterAll(async () => {
    await session?.close();
    await fake?.stop();
  });

  test("the job fails jail_git_tampered naming inner/.git, moved to <job>/quarantine/1 (0700); git status runs nothing", async () => {
    const repo = makeRepo(root, "work").repo;
    const marker = join(markers, "fsmonitor-ran");
    const plant = [
      "mkdir inner && git -C inner init -q",
      `git -C inner config core.fsmonitor 'echo ran >> ${marker}; false'`,
      "echo x > inner/a.txt",
    ].join(" && ");
    fake.script(reply.tool("run_bash", { command: plant }), reply.text("done"));
    const sub = await callTool<{ jobs: { id: string }[] }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "plant", workdir: repo }],
    });
    const id = sub.data.jobs[0]!.id;
    const job = await until(
      async () => {
        const p = await callTool<{ jobs: Record<string, unknown>[] }>(session, "poll_agent", { ids: [id] });
        const j = p.data.jobs[0]!;
        return ["queued", "running"].includes(String(j.status)) ? null : j;
      },
      "the agent job to end",
      90_000,
    );
    const jobDir = join(stateDir, "jobs", id);
    const moved = join(jobDir, "quarantine", "1");
    const said = JSON.stringify(job);
    expect(job.status).toBe("failed");
    expect(job.failure_kind).toBe("jail_git_tampered");
    expect(said).toContain("inner/.git (new)");
    expect(said).toContain(`moved out of the workdir to ${moved}`);
    // Gone from the work tree (its plain file stays, to review); kept whole in the job's folder.
    expect(existsSync(join(repo, "inner/.git"))).toBe(false);
    expect(readFileSync(join(repo, "inner/a.txt"), "utf8")).toBe("x\n");
    expect(readFileSync(join(moved, "inner/.git/config"), "utf8")).toContain("fsmonitor");
    for (const d of [join(jobDir, "quarantine"), moved]) expect(statSync(d).mode & 0o777).toBe(0o700);
    // The user's review runs nothing the job planted: in the workdir and in the folder it made.
    for (const cwd of [repo, join(repo, "inner")]) expect(hostGit(cwd, "status").code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    // Control: the planted repository, where dl keeps it, is one git's status would obey.
    hostGit(join(moved, "inner"), "-c", "safe.directory=*", "status");
    expect(readdirSync(markers)).toEqual(["fsmonitor-ran"]);
    // dl show lists it among the job's files.
    const show = await runDl(["show", id], shell());
    expect(show.stdout).toMatch(/^\s+quarantine\b/m);
  }, 120_000);
});
