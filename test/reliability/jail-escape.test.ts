import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { jailPolicyFor, type TreeGuard } from "../../src/sandbox/index.ts";
import type { JailPolicy } from "../../src/sandbox/policy.ts";
import { runGroup } from "../../src/sys/process.ts";
import { runInJail, skipBwrap } from "../sandbox/jail-env.ts";

/**
 * The jail-escape suite: a hostile CLI (test/fixture/hostile-jail.sh) inside the real
 * bubblewrap jail, once per way out, for both jails dl builds (a Gemini job's, and the
 * run_bash jail of DELEGATE_RUN_BASH_SANDBOX=1). Each test then looks at the host, never
 * at what the script claims: a hook that ran leaves a marker file, a write that landed
 * changes a file, a listener that heard something says so. Run as root in CI.
 */

const HOSTILE = new URL("../fixture/hostile-jail.sh", import.meta.url).pathname;
const GIT_ID = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@x" };

let home = "";
let n = 0;

const JAILS: { name: string; policy: (workdir: string, guard?: TreeGuard) => JailPolicy }[] = [
  {
    name: "Gemini jail",
    policy: (workdir, guard) =>
      jailPolicyFor({ platform: "linux", home, workdir, stateDirs: [], extraReadPaths: [dirname(HOSTILE)] }, guard),
  },
  {
    name: "run_bash jail",
    policy: (workdir, guard) =>
      jailPolicyFor(
        { platform: "linux", home, workdir, stateDirs: [], agyState: false, extraReadPaths: [dirname(HOSTILE)] },
        guard,
      ),
  },
];

function env(): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: home, LANG: "C", ...GIT_ID };
}

async function git(cwd: string, ...args: string[]) {
  return runGroup({ argv: ["git", ...args], cwd, env: env(), timeoutMs: 30_000 });
}

async function repo(name: string): Promise<string> {
  const dir = join(home, `${name}-${++n}`);
  mkdirSync(dir, { recursive: true });
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "commit", "-q", "--allow-empty", "-m", "first");
  return dir;
}

async function hostile(policy: (g?: TreeGuard) => JailPolicy, ...args: string[]) {
  const { run, tamper } = await runInJail(policy, ["/bin/sh", HOSTILE, ...args], env(), { timeoutMs: 60_000 });
  return { out: run.stdout.text() + run.stderr.text(), tamper, run };
}

/**
 * The user's ordinary git commands on the host after the job: review (status, diff), a
 * commit, `rebase --continue`, `submodule status`. Whatever the job planted, none of them
 * may run it (the payload would create the marker).
 */
async function hostGitRunsNothing(checkout: string, marker: string): Promise<void> {
  await git(checkout, "status");
  await git(checkout, "diff");
  const r = await git(checkout, "commit", "-q", "--allow-empty", "-m", "after the job");
  expect(r.stderr.text()).toBe("");
  expect(r.exitCode).toBe(0);
  await git(checkout, "rebase", "--continue");
  await git(checkout, "submodule", "status");
  expect(existsSync(marker)).toBe(false);
}

/** A repository with a submodule (absorbed into .git/modules) and a nested repository. */
async function repoWithNeighbours(name: string): Promise<string> {
  const lib = await repo(`${name}-lib`);
  const dir = await repo(name);
  await git(dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub");
  await git(dir, "commit", "-q", "-m", "sub");
  mkdirSync(join(dir, "vendor/nested"), { recursive: true });
  await git(join(dir, "vendor/nested"), "init", "-q");
  return dir;
}

beforeAll(() => {
  home = realpathSync(mkdtempSync(join(process.env.HOME ?? "/tmp", "jail-escape-")));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

for (const jail of JAILS) {
  describe.skipIf(skipBwrap)(`${jail.name}: nothing the job writes runs on the host`, () => {
    test("every git dir, gitfile and hook folder is read-only: modules, nested repositories, rebase todo", async () => {
      const dir = await repoWithNeighbours("gitdirs");
      const marker = join(home, `marker-${n}`);
      const gitfile = readFileSync(join(dir, "sub/.git"), "utf8");
      const targets = [
        ".git/hooks/pre-commit",
        ".git/hooks/post-index-change",
        ".git/modules/sub/hooks/pre-commit",
        "vendor/nested/.git/hooks/pre-commit",
        "sub/.git",
      ].map((p) => join(dir, p));
      const { out, tamper } = await hostile((g) => jail.policy(dir, g), "write", marker, ...targets);
      for (const t of targets) expect(out).toContain(`write ${t}: refused`);
      expect(tamper).toBeNull();
      for (const cfg of [".git/config", ".git/modules/sub/config", "vendor/nested/.git/config"]) {
        const r = await hostile((g) => jail.policy(dir, g), "fsmonitor", marker, join(dir, cfg));
        expect(r.out).toContain("refused");
      }
      expect((await hostile((g) => jail.policy(dir, g), "rebase-todo", marker)).out).toContain("rebase todo: refused");
      expect((await hostile((g) => jail.policy(dir, g), "worktree", marker)).out).toContain("worktree: refused");
      expect(readFileSync(join(dir, "sub/.git"), "utf8")).toBe(gitfile);
      await hostGitRunsNothing(dir, marker);
      await hostGitRunsNothing(join(dir, "sub"), marker);
    });

    test("a nested repository the job makes (hooks, fsmonitor, a gitlink) is moved out and fails the job", async () => {
      const dir = await repo("gitlink");
      const marker = join(home, `marker-${n}`);
      const { out, tamper } = await hostile((g) => jail.policy(dir, g), "gitlink", marker);
      expect(out).toContain("gitlink: refused");
      expect(tamper?.failureKind).toBe("jail_git_tampered");
      expect(tamper?.changed).toContain("nested/.git (new)");
      expect(existsSync(join(dir, "nested/.git"))).toBe(false);
      await hostGitRunsNothing(dir, marker);
    });

    test("a folder git takes for a repository (bare, with a config) is moved out too", async () => {
      const dir = await repo("bare");
      const marker = join(home, `marker-${n}`);
      const { tamper } = await hostile((g) => jail.policy(dir, g), "bare", marker);
      expect(tamper?.changed).toContain("trap (new)");
      expect(existsSync(join(dir, "trap/config"))).toBe(false);
      await hostGitRunsNothing(dir, marker);
    });

    test("core.hooksPath inside the work tree (husky): read-only, also while the folder is absent", async () => {
      const dir = await repo("husky");
      await git(dir, "config", "core.hooksPath", ".husky/_");
      mkdirSync(join(dir, ".githooks"));
      const marker = join(home, `marker-${n}`);
      const targets = [".husky/_/pre-commit", ".husky/pre-commit", ".githooks/pre-commit"].map((p) => join(dir, p));
      const { out, tamper } = await hostile((g) => jail.policy(dir, g), "write", marker, ...targets);
      for (const t of targets) expect(out).toContain(`write ${t}: refused`);
      expect(tamper).toBeNull();
      expect(existsSync(join(dir, ".husky"))).toBe(false); // the stand-in is gone again
      await hostGitRunsNothing(dir, marker);
    });

    test("hook managers' keys in package.json are put back; their config files are read-only", async () => {
      const dir = await repo("keys");
      writeFileSync(join(dir, "package.json"), '{\n  "name": "x",\n  "lint-staged": {"*.js": "eslint"}\n}\n');
      writeFileSync(join(dir, ".pre-commit-config.yaml"), "repos: []\n");
      const marker = join(home, `marker-${n}`);
      const w = await hostile((g) => jail.policy(dir, g), "write", marker, join(dir, ".pre-commit-config.yaml"));
      expect(w.out).toContain("refused");
      const { tamper } = await hostile((g) => jail.policy(dir, g), "hook-keys", marker);
      expect(tamper?.changed).toContain("package.json#lint-staged (restored)");
      expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))["lint-staged"]).toEqual({ "*.js": "eslint" });
    });

    test("the project's tool configuration is read-only, and a new one anywhere is moved out", async () => {
      const dir = await repo("toolconf");
      mkdirSync(join(dir, ".claude/agents"), { recursive: true });
      writeFileSync(join(dir, ".claude/settings.json"), "{}\n");
      writeFileSync(join(dir, "CLAUDE.md"), "be careful\n");
      const marker = join(home, `marker-${n}`);
      // .vscode is absent: a read-only stand-in while the job runs (VS Code reloads its settings live).
      const kept = [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/agents/coder.md",
        "CLAUDE.md",
        ".vscode/tasks.json",
      ];
      const { out } = await hostile((g) => jail.policy(dir, g), "write", marker, ...kept.map((p) => join(dir, p)));
      for (const p of kept) expect(out).toContain(`write ${join(dir, p)}: refused`);
      expect(readFileSync(join(dir, ".claude/settings.json"), "utf8")).toBe("{}\n");
      const fresh = [".zed/tasks.json", "pkg/.envrc", ".mcp.json", "pkg/.idea/workspace.xml"];
      const r = await hostile((g) => jail.policy(dir, g), "write", marker, ...fresh.map((p) => join(dir, p)));
      expect(r.tamper?.failureKind).toBe("jail_git_tampered");
      for (const p of [".zed", "pkg/.envrc", ".mcp.json", "pkg/.idea"]) {
        expect(r.tamper?.changed).toContain(`${p} (new)`);
        expect(existsSync(join(dir, p))).toBe(false);
      }
    });

    test("a workdir without .claude gets a read-only stand-in: no agent for dl to pick up", async () => {
      const dir = await repo("noclaude");
      const marker = join(home, `marker-${n}`);
      const { out } = await hostile((g) => jail.policy(dir, g), "write", marker, join(dir, ".claude/agents/coder.md"));
      expect(out).toContain("refused");
      expect(existsSync(join(dir, ".claude"))).toBe(false);
    });

    test("mv .git away: refused (a mount point); a linked worktree cannot rewrite its admin files", async () => {
      const dir = await repo("mvgit");
      const marker = join(home, `marker-${n}`);
      expect((await hostile((g) => jail.policy(dir, g), "mv-git", marker)).out).toContain("mv .git: refused");
      await hostGitRunsNothing(dir, marker);
      const main = await repo("main");
      const wt = join(home, `wt-${n}`);
      await git(main, "worktree", "add", "-q", wt, "-b", `feat-${n}`);
      const dotGit = readFileSync(join(wt, ".git"), "utf8");
      const { out } = await hostile((g) => jail.policy(wt, g), "worktree-commondir", marker);
      expect(out).toContain("admin commondir: refused");
      expect(out).toContain(".git file: refused");
      expect(readFileSync(join(wt, ".git"), "utf8")).toBe(dotGit);
      await hostGitRunsNothing(wt, marker);
      await hostGitRunsNothing(main, marker);
    });

    test("git works read-only inside; a commit is refused (delegates edit, they do not commit)", async () => {
      const dir = await repo("commit");
      writeFileSync(join(dir, "a.txt"), "x");
      const { run, tamper } = await runInJail(
        (g) => jail.policy(dir, g),
        ["/bin/sh", "-c", "git status --short; git add a.txt && git commit -q -m 'from the jail'"],
        env(),
      );
      expect(run.stdout.text()).toContain("?? a.txt");
      expect(run.stderr.text()).toContain("Read-only file system");
      expect(tamper).toBeNull();
      expect((await git(dir, "log", "-1", "--format=%s")).stdout.text().trim()).toBe("first");
    });
  });
}

for (const jail of JAILS) {
  describe.skipIf(skipBwrap)(`${jail.name}: no root, no local IPC, a process limit`, () => {
    test("/proc/sys cannot be written, and the jail's uid is not 0", async () => {
      const dir = await repo("sysctl");
      const { out } = await hostile((g) => jail.policy(dir, g), "sysctl", "-");
      expect(out).toContain("uid 1000");
      expect(out).toContain("sysctl: refused");
      expect(out).not.toContain("SYSCTL-WRITTEN");
    });

    test("a host abstract-socket listener hears nothing from the jail (and does from outside)", async () => {
      const dir = await repo("abstract");
      const name = `dl-escape-${process.pid}-${n}`;
      const heard: string[] = [];
      const server = Bun.listen({
        unix: `\0${name}`,
        socket: { data: (_s, d) => void heard.push(String(d)) },
      });
      try {
        const control = await runGroup({ argv: ["/bin/sh", HOSTILE, "abstract", "-", name], cwd: dir, env: env() });
        expect(control.stdout.text()).toContain("abstract: SENT");
        const { out } = await hostile((g) => jail.policy(dir, g), "abstract", "-", name);
        expect(out).toContain("abstract: refused");
        expect(heard.join("")).toBe("FROM-JAIL\n"); // the control's line only
      } finally {
        server.stop(true);
      }
    });

    // The policy's limit lowered to 64: the same cgroup/prlimit path holds it, at an
    // eighth of the processes (a 512-process bomb was ~1,000 sleeps per run of the file).
    // That jobs get 512 is probe-wrap.test.ts's assertion.
    test("a fork bomb stops at the per-job process limit", async () => {
      const dir = await repo("forkbomb");
      const { out } = await hostile((g) => ({ ...jail.policy(dir, g), maxProcs: 64 }), "forkbomb", "-");
      expect(out).toMatch(/running \d+/); // else the output says why the bomb never ran
      const running = Number(/running (\d+)/.exec(out)?.[1]);
      expect(running).toBeGreaterThan(32);
      expect(running).toBeLessThanOrEqual(64);
    });
  });
}

// The TCP test waits out its 3 s connect timeout to the gateway in each jail: the two
// jails wait at the same time (concurrent tests, adjacent here; names as above).
for (const jail of JAILS) {
  describe.skipIf(skipBwrap)(`${jail.name}: no root, no local IPC, a process limit`, () => {
    test.concurrent("a 127.0.0.1 TCP listener hears nothing, through loopback or the gateway", async () => {
      const dir = await repo("tcp");
      const heard: string[] = [];
      const server = Bun.listen({
        hostname: "127.0.0.1",
        port: 0,
        socket: { data: (_s, d) => void heard.push(String(d)) },
      });
      try {
        const { out } = await hostile((g) => jail.policy(dir, g), "tcp", "-", String(server.port), "192.0.2.1");
        expect(out).toContain("tcp 127.0.0.1: refused");
        expect(out).toContain("tcp 192.0.2.1: refused");
        expect(heard).toEqual([]);
      } finally {
        server.stop(true);
      }
    });
  });
}
