import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { localPathOf } from "../../src/sandbox/git-guard.ts";
import { checkGitConfig, JAIL_GIT_HINT, jailPolicyFor } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";

const env = { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", LANG: "C" };
const home = () => realpathSync(process.env.HOME ?? "/tmp");

async function git(cwd: string, ...args: string[]): Promise<void> {
  const r = await runGroup({ argv: ["git", ...args], cwd, env });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.text()}`);
}

/** A fresh repository under the test HOME, and its jail policy. */
async function repo() {
  const workdir = tempDir("guard-repo", home());
  await git(workdir, "init", "-q", "-b", "main");
  return { workdir, policy: jailPolicyFor({ platform: "linux", home: home(), workdir, stateDirs: [] }) };
}

describe("checkGitConfig (real git)", () => {
  test("a remote at a local path outside the jail is refused with the hint", async () => {
    const { workdir, policy } = await repo();
    await git(workdir, "remote", "add", "origin", "/some/other/path");
    const r = await checkGitConfig(policy, { env });
    expect(r).toEqual({
      ok: false,
      failure_kind: "jail_git_config",
      hint: JAIL_GIT_HINT,
      message: expect.stringContaining("remote.origin.url"),
      offending: [{ key: "remote.origin.url", value: "/some/other/path" }],
    });
    expect(JAIL_GIT_HINT).toBe("git branch --unset-upstream");
  });

  test("file:// URLs and relative paths that climb out are refused too", async () => {
    const { workdir, policy } = await repo();
    await git(workdir, "remote", "add", "up", "file:///srv/mirror.git");
    await git(workdir, "remote", "add", "sibling", "../neighbour");
    const r = await checkGitConfig(policy, { env });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.offending.map((e) => e.key).sort()).toEqual(["remote.sibling.url", "remote.up.url"]);
  });

  test("an upstream that is a path (branch.<name>.remote) is refused; one naming a network remote is fine", async () => {
    const { workdir, policy } = await repo();
    await git(workdir, "remote", "add", "origin", "https://github.com/example/project.git");
    await git(workdir, "config", "branch.main.remote", "origin");
    expect(await checkGitConfig(policy, { env })).toEqual({ ok: true, checked: true });
    await git(workdir, "config", "branch.main.remote", "/home/someone/main-checkout");
    const r = await checkGitConfig(policy, { env });
    expect(r).toMatchObject({
      ok: false,
      offending: [{ key: "branch.main.remote", value: "/home/someone/main-checkout" }],
    });
  });

  test("network remotes, scp-like remotes and paths inside the workdir pass", async () => {
    const { workdir, policy } = await repo();
    mkdirSync(join(workdir, "vendor"));
    await git(workdir, "remote", "add", "gh", "git@github.com:example/project.git");
    await git(workdir, "remote", "add", "ssh", "ssh://git.example.com/project.git");
    await git(workdir, "remote", "add", "inside", "./vendor");
    await git(workdir, "config", "branch.main.remote", ".");
    expect(await checkGitConfig(policy, { env })).toEqual({ ok: true, checked: true });
  });

  test("no remotes at all, and a plain directory (git reads only the global config there)", async () => {
    const { policy } = await repo();
    expect(await checkGitConfig(policy, { env })).toEqual({ ok: true, checked: true });
    const plain = tempDir("guard-plain", home());
    const p = jailPolicyFor({ platform: "linux", home: home(), workdir: plain, stateDirs: [] });
    expect(await checkGitConfig(p, { env: { ...env, GIT_CEILING_DIRECTORIES: home() } })).toMatchObject({ ok: true });
  });
});

test("localPathOf", () => {
  expect(localPathOf("/abs/repo", "/w")).toBe("/abs/repo");
  expect(localPathOf("../x", "/w/p")).toBe("/w/x");
  expect(localPathOf("file:///srv/a%20b.git", "/w")).toBe("/srv/a b.git");
  expect(localPathOf("file://localhost/srv/r", "/w")).toBe("/srv/r");
  expect(localPathOf("https://github.com/a/b", "/w")).toBeNull();
  expect(localPathOf("git@github.com:a/b.git", "/w")).toBeNull();
  expect(localPathOf("ext::ssh -x host", "/w")).toBeNull();
  expect(localPathOf("./dir:with-colon", "/w")).toBe("/w/dir:with-colon");
});
