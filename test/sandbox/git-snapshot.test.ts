import { describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { guardGitControl, jailPolicyFor } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";

/**
 * The second line behind the read-only git files: what a job changed anyway (here written
 * straight on the host, as a jail that failed would) fails the check, is named, and is
 * put back; placeholders leave no trace.
 */

const env = {
  PATH: "/usr/bin:/bin",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@x",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@x",
};

async function repo(): Promise<{ home: string; dir: string }> {
  const home = realpathSync(mkdtempSync(join(process.env.HOME ?? "/tmp", "git-snap-")));
  const dir = join(home, "r");
  mkdirSync(dir);
  await runGroup({ argv: ["git", "init", "-q", "-b", "main"], cwd: dir, env });
  return { home, dir };
}

const policyOf = (home: string, dir: string) => jailPolicyFor({ platform: "linux", home, workdir: dir, stateDirs: [] });

describe("git control snapshot", () => {
  test("an untouched repository passes, and the placeholders are removed", async () => {
    const { home, dir } = await repo();
    rmSync(join(dir, ".git/hooks"), { recursive: true });
    const guard = guardGitControl(policyOf(home, dir));
    expect(readFileSync(join(dir, ".git/commondir"), "utf8")).toBe(".\n");
    expect(existsSync(join(dir, ".git/hooks"))).toBe(true);
    expect(guard.check()).toBeNull();
    expect(existsSync(join(dir, ".git/commondir"))).toBe(false);
    expect(existsSync(join(dir, ".git/hooks"))).toBe(false);
  });

  test("a new hook, a rewritten config and a commondir: jail_git_tampered, each named, all undone", async () => {
    const { home, dir } = await repo();
    const config = readFileSync(join(dir, ".git/config"), "utf8");
    const guard = guardGitControl(policyOf(home, dir));
    writeFileSync(join(dir, ".git/hooks/pre-commit"), "#!/bin/sh\necho pwned\n", { mode: 0o755 });
    writeFileSync(join(dir, ".git/config"), `${config}[core]\n\thooksPath = /tmp/evil\n`);
    writeFileSync(join(dir, ".git/commondir"), "/tmp/evil\n");
    const t = guard.check();
    expect(t?.failureKind).toBe("jail_git_tampered");
    expect(t?.changed).toEqual(
      expect.arrayContaining([
        join(dir, ".git/hooks/pre-commit"),
        join(dir, ".git/config"),
        join(dir, ".git/commondir"),
      ]),
    );
    expect(t?.message).toContain("restored");
    expect(existsSync(join(dir, ".git/hooks/pre-commit"))).toBe(false);
    expect(readFileSync(join(dir, ".git/config"), "utf8")).toBe(config);
    expect(existsSync(join(dir, ".git/commondir"))).toBe(false);
  });

  test(".git renamed away and replaced: named, and the original put back", async () => {
    const { home, dir } = await repo();
    const guard = guardGitControl(policyOf(home, dir));
    renameSync(join(dir, ".git"), join(dir, ".git-orig"));
    mkdirSync(join(dir, ".git"));
    writeFileSync(join(dir, ".git/config"), "[core]\n\thooksPath = /tmp/evil\n");
    const t = guard.check();
    expect(t?.changed).toContain(`${join(dir, ".git")} (replaced)`);
    expect(existsSync(join(dir, ".git/HEAD"))).toBe(true);
    expect(existsSync(join(dir, ".git-orig"))).toBe(false);
    const r = await runGroup({ argv: ["git", "config", "core.hooksPath"], cwd: dir, env });
    expect(r.exitCode).toBe(1); // unset again
  });
});
