import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { askGit } from "../../src/sandbox/git-reach.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * dl asks the real git what a repository's configuration names, from every source the
 * user's git reads: besides HOME's ~/.gitconfig, GIT_CONFIG_GLOBAL's file and the
 * GIT_CONFIG_COUNT/KEY_n/VALUE_n entries. A hooks dir or a driver set only there is run
 * by the host's git all the same, so it must be what dl protects; GIT_DIR still never
 * points dl's question elsewhere.
 */

async function git(cwd: string, ...args: string[]) {
  const r = await runGroup({
    argv: ["git", ...args],
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
    timeoutMs: 10_000,
  });
  expect(r.exitCode).toBe(0);
}

describe("askGit reads the user's config sources", () => {
  test("GIT_CONFIG_GLOBAL's hooks dir and a GIT_CONFIG_COUNT driver, resolved in the repository", async () => {
    const base = realpathSync(tempDir("git-reach-sources"));
    const repo = join(base, "repo");
    const home = join(base, "home");
    mkdirSync(repo);
    mkdirSync(home);
    await git(repo, "init", "-q");
    const global = join(base, "elsewhere.gitconfig");
    writeFileSync(global, "[core]\n\thooksPath = tools/ghooks\n");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      GIT_CONFIG_GLOBAL: global,
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "diff.envconv.textconv",
      GIT_CONFIG_VALUE_0: "sh ./envconv.sh",
      GIT_DIR: join(base, "nowhere"),
    };
    const facts = await askGit(repo, home, { env });
    expect(facts?.toplevel).toBe(repo);
    expect(facts?.hooksDirs).toContain(join(repo, "tools/ghooks"));
    expect(facts?.named).toContain(join(repo, "envconv.sh"));
  });
});

describe("askGit reads the includes git does not read today", () => {
  // An includeIf whose condition is false now (onbranch:main while a rebase has HEAD
  // detached, here a branch not checked out) is read by git once it holds: its own include
  // and the programs it names are git's configuration all the same.
  test("an includeIf onbranch of another branch: its file's include (absent) and its fsmonitor are named", async () => {
    const base = realpathSync(tempDir("git-reach-unread"));
    const repo = join(base, "repo");
    const home = join(base, "home");
    mkdirSync(join(repo, "conf"), { recursive: true });
    mkdirSync(home);
    await git(repo, "init", "-q", "-b", "main");
    await git(repo, "config", "includeIf.onbranch:other.path", "../conf/other.inc");
    writeFileSync(
      join(repo, "conf/other.inc"),
      '[include]\n\tpath = local.inc\n[core]\n\tfsmonitor = "sh ./tools/fsmon.sh"\n[includeIf "gitdir:/nowhere/"]\n\tpath = deep.inc\n',
    );
    writeFileSync(join(repo, "conf/deep.inc"), "[core]\n\thooksPath = deephooks\n");
    const facts = await askGit(repo, home, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home } });
    expect(facts?.includes).toContain(join(repo, "conf/other.inc"));
    expect(facts?.includes).toContain(join(repo, "conf/local.inc"));
    expect(facts?.includes).toContain(join(repo, "conf/deep.inc"));
    expect(facts?.named).toContain(join(repo, "tools/fsmon.sh"));
    expect(facts?.hooksDirs).toContain(join(repo, "deephooks"));
    expect(facts?.configFiles).toContain(join(repo, "conf/other.inc"));
  });
});
