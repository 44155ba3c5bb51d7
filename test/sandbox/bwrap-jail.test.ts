import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseAgyOutput } from "../../src/jobs/providers/gemini/output.ts";
import { ensureAgyStateDirs, jailPolicyFor, type TreeGuard } from "../../src/sandbox/index.ts";
import type { JailPolicy } from "../../src/sandbox/policy.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { linuxProbe, runInJail, skipBwrap } from "./jail-env.ts";

/**
 * The real bubblewrap jail around the fake agy: every escape it tries fails, what a
 * jailed agy must be able to do works. Runs wherever bwrap works; fails (never skips) in CI.
 */

const FAKE_AGY = new URL("../fixture/fake-agy.sh", import.meta.url).pathname;
const REPO_FILE = new URL("../../package.json", import.meta.url).pathname; // another project, as far as the jail knows
const GIT_ID = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x" };

let home = "";
let stateDir = "";

function plant(path: string, text: string, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode });
}

function envFor(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: home, LANG: "C", ...GIT_ID, ...extra };
}

/** Each run's own agy state, as a job's folder holds it (gemini/launch.ts). */
function agyStateOf(workdir: string): string {
  return join(stateDir, "jobs", workdir.replaceAll("/", "_"), "agy-state");
}

function policyFor(workdir: string, guard?: TreeGuard): JailPolicy {
  return jailPolicyFor(
    {
      platform: "linux",
      home,
      workdir,
      stateDirs: [stateDir],
      agyStateDir: agyStateOf(workdir),
      // The fake agy lives in this repository; the real one would sit under /usr or ~/.gemini/bin.
      extraReadPaths: [dirname(FAKE_AGY)],
    },
    guard,
  );
}

async function agyInJail(workdir: string, task: string) {
  const policy = policyFor(workdir);
  ensureAgyStateDirs(policy);
  const argv = [
    FAKE_AGY,
    "-p",
    task,
    "--output-format",
    "json",
    "--dangerously-skip-permissions",
    "--model",
    "gemini-3.8-flash-low",
  ];
  const { run: r, tamper } = await runInJail((g) => policyFor(workdir, g), argv, envFor(), { timeoutMs: 30_000 });
  return {
    tamper,
    run: r,
    outcome: parseAgyOutput({ stdout: r.stdout.text(), stderr: r.stderr.text(), exitCode: r.exitCode }),
  };
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await runGroup({ argv: ["git", ...args], cwd, env: envFor() });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.text()}`);
  return r.stdout.text();
}

beforeAll(() => {
  home = tempDir("jail-home", process.env.HOME ?? "/tmp");
  stateDir = join(home, ".local/state/dl-gemini");
  plant(join(home, ".ssh/id_rsa"), "SSH-PRIVATE-KEY");
  plant(join(home, ".codex/auth.json"), "CODEX-TOKEN");
  plant(join(stateDir, "jobs.sqlite"), "DL-STATE");
  plant(join(home, "other-project/secret.txt"), "OTHER-PROJECT-SECRET");
  plant(join(home, "other-project/tool.sh"), "#!/bin/sh\nexit 0\n", 0o700);
  plant(join(home, ".gemini/settings.json"), '{"original":true}');
  plant(join(home, ".gemini/config/mcp_config.json"), "{}");
});

test.skipIf(skipBwrap)("the bwrap jail is usable here (required when CI is set)", () => {
  // Reached in CI even without bwrap (skipBwrap is false there): then this fails with the probe's fix.
  expect(linuxProbe).toMatchObject({ kind: "bwrap", ok: true });
});

test("control: outside the jail the same fake agy does read a planted secret", async () => {
  // Proves the escape report can say LEAKED, so "blocked" below means the jail blocked it.
  const scratch = tempDir("scratch", home);
  const task = `ESCAPE read=${home}/other-project/secret.txt`;
  const r = await runGroup({
    argv: [FAKE_AGY, "-p", task, "--output-format", "json"],
    cwd: scratch,
    env: { PATH: "/usr/bin:/bin", HOME: scratch },
  });
  const outcome = parseAgyOutput({ stdout: r.stdout.text(), stderr: r.stderr.text(), exitCode: r.exitCode });
  expect(outcome).toMatchObject({ status: "done" });
  if (outcome.status === "done")
    expect(outcome.response).toContain(`read ${home}/other-project/secret.txt: LEAKED OTHER-PROJECT-SECRET`);
});

describe.skipIf(skipBwrap)("fake agy inside the real bwrap jail", () => {
  test("every escape attempt fails; the workdir and agy's writable state work", async () => {
    const workdir = join(home, "projects/mine");
    mkdirSync(workdir, { recursive: true });
    const outside = join(dirname(home), `outside-${process.pid}.txt`);
    const task = [
      "ESCAPE",
      `read=${home}/other-project/secret.txt`,
      `read=${home}/.codex/auth.json`,
      `read=${stateDir}/jobs.sqlite`,
      `read=${REPO_FILE}`,
      "read=/etc/shadow",
      `write=${home}/other-project/evil.txt`,
      `write=${outside}`,
      "write=/usr/evil.txt",
      `exec=${home}/other-project/tool.sh`,
    ].join(" ");
    const { run, outcome } = await agyInJail(workdir, task);
    expect(run.exitCode).toBe(0);
    if (outcome.status !== "done") throw new Error(`agy failed: ${JSON.stringify(outcome)}`);
    const report = outcome.response;
    expect(report).not.toContain("LEAKED");
    expect(report).not.toContain("EXECUTED");
    for (const p of [`${home}/.ssh/id_rsa`, `${home}/other-project/secret.txt`, `${home}/.codex/auth.json`]) {
      expect(report).toContain(`read ${p}: blocked`);
    }
    expect(report).toContain(`read ${REPO_FILE}: blocked`);
    expect(report).toContain(`write ${home}/.gemini/settings.json: blocked`);
    expect(report).toContain(`write ${home}/other-project/evil.txt: blocked`);
    expect(report).toContain("write /usr/evil.txt: blocked");
    expect(report).toContain("exec /usr/bin/open: blocked");
    expect(report).toContain(`exec ${home}/other-project/tool.sh: blocked`);
    // Nothing reached the host outside the workdir and agy's state…
    expect(readFileSync(join(home, ".gemini/settings.json"), "utf8")).toBe('{"original":true}');
    expect(existsSync(join(home, "other-project/evil.txt"))).toBe(false);
    expect(existsSync(outside)).toBe(false); // /tmp inside is private
    expect(existsSync("/usr/evil.txt")).toBe(false);
    // …and what a jailed agy must do landed on the host.
    expect(report).toContain(`write ${workdir}/agy-wrote.txt: written`);
    expect(readFileSync(join(workdir, "agy-wrote.txt"), "utf8")).toBe("written by fake agy\n");
    // agy's state is the job's own: kept in its folder, never the user's agy state.
    expect(readFileSync(join(agyStateOf(workdir), "brain/note.txt"), "utf8")).toBe("written by fake agy\n");
    expect(existsSync(join(home, ".gemini/antigravity-cli/brain/note.txt"))).toBe(false);
  });

  test("what one job leaves in agy's state (plans, implicit context, conversations, cache) steers neither the host's agy nor the next job", async () => {
    // agy reads these back: brain/<conversation>/ plans, implicit/ context, conversations,
    // its cache. A shared folder would carry one job's planted instructions into the next.
    const state = join(home, ".gemini/antigravity-cli");
    const dirs = ["brain", "implicit", "conversations", "cache", "annotations"];
    plant(join(state, "brain/user-plan.md"), "THE-USERS-OWN-PLAN");
    const first = join(home, "projects/steer-1");
    const second = join(home, "projects/steer-2");
    mkdirSync(first, { recursive: true });
    mkdirSync(second, { recursive: true });
    const planted = dirs.map((d) => join(state, d, "planted.md"));
    const a = await agyInJail(first, ["ESCAPE", ...planted.map((p) => `write=${p}`)].join(" "));
    if (a.outcome.status !== "done") throw new Error(`agy failed: ${JSON.stringify(a.outcome)}`);
    for (const p of planted) expect(a.outcome.response).toContain(`write ${p}: written`);
    const b = await agyInJail(
      second,
      ["ESCAPE", ...planted.map((p) => `read=${p}`), `read=${state}/brain/user-plan.md`].join(" "),
    );
    if (b.outcome.status !== "done") throw new Error(`agy failed: ${JSON.stringify(b.outcome)}`);
    // The next job does not see the first one's files, nor the user's own conversations.
    for (const p of planted) expect(b.outcome.response).toContain(`read ${p}: blocked`);
    expect(b.outcome.response).not.toContain("THE-USERS-OWN-PLAN");
    // The host's agy state holds none of them; the first job's folder holds all.
    for (const d of dirs) {
      expect(existsSync(join(state, d, "planted.md"))).toBe(false);
      expect(readFileSync(join(agyStateOf(first), d, "planted.md"), "utf8")).toBe("written by fake agy\n");
    }
  });

  test("the child sees only the allowlisted environment", async () => {
    const workdir = join(home, "projects/env");
    mkdirSync(workdir, { recursive: true });
    const { run: r } = await runInJail((g) => policyFor(workdir, g), ["/usr/bin/env"], {
      PATH: "/usr/bin:/bin",
      HOME: home,
    });
    const vars = r.stdout.text().trim().split("\n").sort();
    // PWD is bwrap's own (--chdir); nothing of the test runner's environment gets through.
    expect(vars).toEqual([`HOME=${home}`, "PATH=/usr/bin:/bin", `PWD=${workdir}`, "TMPDIR=/tmp"]);
  });

  test("a linked worktree: git reads the main checkout's .git but cannot commit or plant a hook; its files stay out of reach", async () => {
    const main = join(home, "repos/main");
    const wt = join(home, "repos/feature");
    mkdirSync(main, { recursive: true });
    await git(main, "init", "-q", "-b", "main");
    writeFileSync(join(main, "main-only.txt"), "MAIN-CHECKOUT-FILE");
    await git(main, "add", "-A");
    await git(main, "commit", "-q", "-m", "first");
    await git(main, "worktree", "add", "-q", wt, "-b", "feat");
    const hook = join(main, ".git/hooks/post-commit");
    const task = `ESCAPE RUN=git-commit read=${main}/main-only.txt write=${hook} write=${main}/.git/config`;
    const { outcome } = await agyInJail(wt, task);
    if (outcome.status !== "done") throw new Error(`agy failed: ${JSON.stringify(outcome)}`);
    // Delegates edit the work tree; they do not commit: the common dir is read-only.
    expect(outcome.response).toContain("git commit: failed");
    expect(outcome.response).toContain("Read-only file system");
    expect(outcome.response).toContain(`read ${main}/main-only.txt: blocked`);
    expect(outcome.response).toContain(`write ${hook}: blocked`);
    expect(outcome.response).toContain(`write ${main}/.git/config: blocked`);
    expect(existsSync(hook)).toBe(false);
    expect((await git(main, "log", "-1", "--format=%s", "feat")).trim()).toBe("first");
    expect(readFileSync(join(wt, "agy-wrote.txt"), "utf8")).toBe("written by fake agy\n");
  });

  test("without -p the fake hangs like the real agy, and the run's timeout ends it", async () => {
    const workdir = join(home, "projects/hang");
    mkdirSync(workdir, { recursive: true });
    const { run: r } = await runInJail((g) => policyFor(workdir, g), [FAKE_AGY, "--output-format", "json"], envFor(), {
      timeoutMs: 500,
      graceMs: 200,
    });
    expect(r.timedOut).toBe(true);
  });
});
