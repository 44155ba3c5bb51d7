import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { isDlError } from "../../src/errors.ts";
import { askGit } from "../../src/sandbox/git-reach.ts";
import { prepareTreeGuard } from "../../src/sandbox/tree-guard.ts";
import { type RunOptions, type RunResult, runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * The guard knows what git runs only by asking git. A question git did not answer (it
 * timed out, or failed on a repository it reads) used to read as "git names nothing": no
 * hooks dir, no fsmonitor script, no config files, so a job could rewrite what the user's
 * next git command runs. Now it refuses, naming the repository; only git's own "not a git
 * repository" means there is nothing to protect.
 */

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

async function repoWithHooksPath(tag: string): Promise<{ repo: string; home: string }> {
  const base = realpathSync(tempDir(tag));
  const repo = join(base, "repo");
  const home = join(base, "home");
  mkdirSync(repo);
  mkdirSync(home);
  const r = await runGroup({
    argv: ["git", "init", "-q", repo],
    cwd: base,
    env: { ...ENV, HOME: home },
    timeoutMs: 10_000,
  });
  expect(r.exitCode).toBe(0);
  writeFileSync(join(repo, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n\tfsmonitor = sh ./fsmon.sh\n");
  return { repo, home };
}

/** git as it is, except that one subcommand never answers (as a git stuck on a slow disk or a lock). */
function stuckOn(sub: string) {
  return async (o: RunOptions): Promise<RunResult> => {
    if (o.argv[1] !== sub) return runGroup(o);
    return runGroup({ ...o, argv: ["sleep", "5"], timeoutMs: 50 });
  };
}

async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
    return "answered";
  } catch (e) {
    return isDlError(e) ? { code: e.code, ...e.data, message: e.message } : String(e);
  }
}

describe("a git that does not answer is no repository with nothing to protect", () => {
  test("answered, the hooks dir and the fsmonitor script are named", async () => {
    const { repo, home } = await repoWithHooksPath("git-unanswered-ok");
    const facts = await askGit(repo, home, { env: { ...ENV, HOME: home } });
    expect(facts?.hooksDirs).toContain(join(repo, "tools/hooks"));
    expect(facts?.named).toContain(join(repo, "fsmon.sh"));
  });

  test("git config timing out refuses, with git_unanswered and the repository named", async () => {
    const { repo, home } = await repoWithHooksPath("git-unanswered-config");
    const got = await refusal(askGit(repo, home, { env: { ...ENV, HOME: home }, run: stuckOn("config") }));
    expect(got).toMatchObject({ failure_kind: "jail_git_config", reason: "git_unanswered" });
    expect((got as { message: string }).message).toContain(repo);
  });

  test("git rev-parse failing on a repository it reads (not 'not a git repository') refuses too", async () => {
    const { repo, home } = await repoWithHooksPath("git-unanswered-revparse");
    // A config line git cannot read: every git command there fails, and so does dl's question.
    writeFileSync(join(repo, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n[broken\n");
    const got = await refusal(askGit(repo, home, { env: { ...ENV, HOME: home } }));
    expect(got).toMatchObject({ failure_kind: "jail_git_config", reason: "git_unanswered" });
  });

  test("a folder in no repository is still no repository", async () => {
    const base = realpathSync(tempDir("git-unanswered-none"));
    expect(await askGit(base, base, { env: { ...ENV, HOME: base } })).toBeNull();
  });

  test("the jail's plan refuses the job when git's config does not answer", async () => {
    const { repo, home } = await repoWithHooksPath("git-unanswered-plan");
    const got = await refusal(
      prepareTreeGuard(repo, {
        home,
        env: { ...ENV, HOME: home },
        run: stuckOn("config"),
        quarantine: () => join(home, "quarantine"),
      }),
    );
    expect(got).toMatchObject({ failure_kind: "jail_git_config", reason: "git_unanswered" });
  });

  test("the write tools refuse a write where git did not answer, saying why", async () => {
    const { repo, home } = await repoWithHooksPath("git-unanswered-write");
    writeFileSync(join(repo, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n[broken\n");
    const refusal = await refusedWrite(repo, join(repo, "tools", "hooks", "pre-commit"), {
      writable: [],
      gitEnv: { ...ENV, HOME: home },
    });
    expect(refusal).toStartWith("path_refused: tools/hooks/pre-commit: git did not answer");
  });
});
