import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { jailPolicyFor } from "../../src/sandbox/index.ts";
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

const JAILS: { name: string; policy: (workdir: string) => JailPolicy }[] = [
  {
    name: "Gemini jail",
    policy: (workdir) =>
      jailPolicyFor({ platform: "linux", home, workdir, stateDirs: [], extraReadPaths: [dirname(HOSTILE)] }),
  },
  {
    name: "run_bash jail",
    policy: (workdir) =>
      jailPolicyFor({
        platform: "linux",
        home,
        workdir,
        stateDirs: [],
        agyState: false,
        extraReadPaths: [dirname(HOSTILE)],
      }),
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

async function hostile(policy: JailPolicy, ...args: string[]) {
  const { run, tamper } = await runInJail(policy, ["/bin/sh", HOSTILE, ...args], env(), { timeoutMs: 60_000 });
  return { out: run.stdout.text() + run.stderr.text(), tamper, run };
}

/** The user's next commit on the host: it must work, and no planted hook may run. */
async function hostCommitRunsNothing(checkout: string, marker: string): Promise<void> {
  const r = await git(checkout, "commit", "-q", "--allow-empty", "-m", "after the job");
  expect(r.stderr.text()).toBe("");
  expect(r.exitCode).toBe(0);
  expect(existsSync(marker)).toBe(false);
}

beforeAll(() => {
  home = realpathSync(mkdtempSync(join(process.env.HOME ?? "/tmp", "jail-escape-")));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

for (const jail of JAILS) {
  describe.skipIf(skipBwrap)(`${jail.name}: no host code through .git`, () => {
    test("a repository without .git/hooks: the jail cannot create hooks/pre-commit", async () => {
      const dir = await repo("nohooks");
      rmSync(join(dir, ".git/hooks"), { recursive: true, force: true });
      const marker = join(home, `marker-${n}`);
      const { out, tamper } = await hostile(jail.policy(dir), "hooks", marker);
      expect(out).toContain("cannot create .git/hooks/pre-commit: Read-only file system");
      expect(tamper).toBeNull();
      // The placeholder folder is gone again: the repository is as it was.
      expect(existsSync(join(dir, ".git/hooks"))).toBe(false);
      await hostCommitRunsNothing(dir, marker);
    });

    test("mv .git away and a new .git with core.hooksPath: the move is refused", async () => {
      const dir = await repo("mvgit");
      const marker = join(home, `marker-${n}`);
      const { out } = await hostile(jail.policy(dir), "mv-git", marker);
      expect(out).toContain("mv .git: refused");
      expect(existsSync(join(dir, ".git-orig"))).toBe(false);
      await hostCommitRunsNothing(dir, marker);
    });

    test("writing .git/commondir to a git dir the jail made: refused, and git still works", async () => {
      const dir = await repo("commondir");
      const marker = join(home, `marker-${n}`);
      const { out } = await hostile(jail.policy(dir), "commondir", marker);
      expect(out).toContain("commondir: refused");
      expect(existsSync(join(dir, ".git/commondir"))).toBe(false);
      await hostCommitRunsNothing(dir, marker);
    });

    test("a linked worktree rewriting the main checkout's worktrees/<name>/commondir or its .git file", async () => {
      const main = await repo("main");
      const wt = join(home, `wt-${n}`);
      await git(main, "worktree", "add", "-q", wt, "-b", `feat-${n}`);
      const dotGit = readFileSync(join(wt, ".git"), "utf8");
      const marker = join(home, `marker-${n}`);
      const { out, tamper } = await hostile(jail.policy(wt), "worktree-commondir", marker);
      expect(out).toContain("admin commondir: refused");
      expect(out).toContain(".git file: refused");
      expect(tamper).toBeNull();
      expect(readFileSync(join(wt, ".git"), "utf8")).toBe(dotGit);
      await hostCommitRunsNothing(wt, marker);
      await hostCommitRunsNothing(main, marker);
    });

    test("a commit from inside still lands (objects, refs, index, logs, HEAD writable)", async () => {
      const dir = await repo("commit");
      writeFileSync(join(dir, "a.txt"), "x");
      const policy = jail.policy(dir);
      const { run, tamper } = await runInJail(
        policy,
        ["/bin/sh", "-c", "git add a.txt && git commit -q -m 'from the jail' && git checkout -q -b side"],
        env(),
      );
      expect(run.stderr.text()).toBe("");
      expect(tamper).toBeNull();
      expect((await git(dir, "log", "-1", "--format=%s")).stdout.text().trim()).toBe("from the jail");
      expect((await git(dir, "branch", "--show-current")).stdout.text().trim()).toBe("side");
    });
  });

  describe.skipIf(skipBwrap)(`${jail.name}: no root, no local IPC, a process limit`, () => {
    test("/proc/sys cannot be written, and the jail's uid is not 0", async () => {
      const dir = await repo("sysctl");
      const { out } = await hostile(jail.policy(dir), "sysctl", "-");
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
        const { out } = await hostile(jail.policy(dir), "abstract", "-", name);
        expect(out).toContain("abstract: refused");
        expect(heard.join("")).toBe("FROM-JAIL\n"); // the control's line only
      } finally {
        server.stop(true);
      }
    });

    test("a 127.0.0.1 TCP listener hears nothing, through loopback or the gateway", async () => {
      const dir = await repo("tcp");
      const heard: string[] = [];
      const server = Bun.listen({
        hostname: "127.0.0.1",
        port: 0,
        socket: { data: (_s, d) => void heard.push(String(d)) },
      });
      try {
        const { out } = await hostile(jail.policy(dir), "tcp", "-", String(server.port), "192.0.2.1");
        expect(out).toContain("tcp 127.0.0.1: refused");
        expect(out).toContain("tcp 192.0.2.1: refused");
        expect(heard).toEqual([]);
      } finally {
        server.stop(true);
      }
    });

    test("a fork bomb stops at the per-job process limit", async () => {
      const dir = await repo("forkbomb");
      const { out } = await hostile(jail.policy(dir), "forkbomb", "-");
      expect(out).toMatch(/running \d+/); // else the output says why the bomb never ran
      const running = Number(/running (\d+)/.exec(out)?.[1]);
      expect(running).toBeGreaterThan(100);
      expect(running).toBeLessThanOrEqual(512);
    });
  });
}
