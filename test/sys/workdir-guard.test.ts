import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSettings } from "../../src/agent/settings.ts";
import type { Config } from "../../src/config.ts";
import { prepareDelegation } from "../../src/dispatch/run-delegation.ts";
import { isDlError } from "../../src/errors.ts";
import { jobGuards } from "../../src/jobs/service.ts";
import { PROVIDERS } from "../../src/providers.ts";
import { jobStateDirs, protectedDirs, resolveStatePaths } from "../../src/sys/paths.ts";
import { checkWorkdir, workdirGuard } from "../../src/sys/workdir-guard.ts";
import { tempDir } from "../helpers/dl.ts";

/** A home with every default dir created, and the Codex state dir overridden elsewhere. */
function setup() {
  const root = tempDir("workdir-guard");
  const home = join(root, "home");
  const paths = resolveStatePaths({
    platform: "linux",
    cwd: root,
    home,
    xdgCacheHome: join(root, "cache"),
    jobStores: PROVIDERS,
    overrides: { stateDirs: { codex: join(root, "elsewhere", "codex-state") } },
    isolation: false,
  });
  for (const d of [...protectedDirs(paths), paths.slotsDir, join(root, "project")]) mkdirSync(d, { recursive: true });
  return { root, home, paths, project: join(root, "project") };
}

const forbidden = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (!isDlError(e, "workdir_forbidden")) throw e;
    return e.data.failure_kind;
  }
  throw new Error("accepted");
};

describe("the one workdir guard", () => {
  test("an overridden state dir is protected, and so is the default one it replaced, and the pool cache", () => {
    const { home, paths, project } = setup();
    const guard = workdirGuard(paths);
    expect(paths.stateDirs.codex).not.toBe(join(home, ".codex-jobs"));
    const refused = [
      paths.stateDirs.codex,
      join(home, ".codex-jobs"),
      join(home, ".gemini-jobs"),
      join(home, ".dsh-jobs"),
      paths.cacheDir,
      paths.slotsDir,
      home,
      "/",
    ];
    for (const dir of refused) expect(forbidden(() => checkWorkdir(dir, guard))).toBe("workdir_forbidden");
    expect(checkWorkdir(project, guard)).toBe(project);
  });

  test("a symlink into protected state and a dir holding it are refused; a missing dir is bad_input", () => {
    const { root, paths } = setup();
    const guard = workdirGuard(paths);
    const link = join(root, "to-cache");
    symlinkSync(paths.slotsDir, link);
    expect(forbidden(() => checkWorkdir(link, guard))).toBe("workdir_forbidden");
    expect(forbidden(() => checkWorkdir(join(root, "elsewhere"), guard))).toBe("workdir_forbidden");
    expect(() => checkWorkdir(join(root, "missing"), guard)).toThrow(/does not exist or is not a directory/);
  });

  test("both users refuse the pool cache dir: a Codex job's guard and an agent delegation", async () => {
    const { paths } = setup();
    const config = {
      paths,
      codex: { caps: {}, envPassthrough: [] },
      childEnv: { PATH: "/usr/bin:/bin" },
    } as unknown as Config;
    // The guard JobService.start gives every provider's engine, Codex's among them.
    const codexGuards = jobGuards(config);
    expect(forbidden(() => checkWorkdir(paths.slotsDir, codexGuards))).toBe("workdir_forbidden");
    const agent = prepareDelegation(
      { agent_name: "helper", task: "x", workdir: paths.slotsDir },
      config,
      {} as AgentSettings,
    );
    await expect(agent).rejects.toMatchObject({
      code: "workdir_forbidden",
      data: { failure_kind: "workdir_forbidden" },
    });
  });

  test("one list of job state dirs: every provider, with its override applied", () => {
    const { home, paths } = setup();
    const dirs = jobStateDirs(paths);
    expect(dirs.map((d) => d.provider)).toEqual(PROVIDERS.map((d) => d.name));
    expect(dirs.find((d) => d.provider === "codex")?.stateDir).toBe(paths.stateDirs.codex);
    expect(dirs.find((d) => d.provider === "gemini")?.stateDir).toBe(join(home, ".gemini-jobs"));
  });
});

describe("the workdir guard without any state dir in the way", () => {
  test("$HOME itself (and / ) is refused for what it is, even when no state dir lies inside it", () => {
    const root = tempDir("workdir-home");
    const home = join(root, "home");
    mkdirSync(home, { recursive: true });
    const g = { home, protectedDirs: [join(root, "state-elsewhere")] };
    for (const dir of [home, `${home}/`, "/"]) {
      let msg = "";
      try {
        checkWorkdir(dir, g);
      } catch (e) {
        if (!isDlError(e, "workdir_forbidden")) throw e;
        msg = e.message;
      }
      expect(msg, dir).toContain("read/write access to all of it");
    }
    mkdirSync(join(home, "project"));
    expect(checkWorkdir(join(home, "project"), g)).toBe(join(home, "project"));
  });
});

describe("a workdir inside a git dir or a folder the host obeys", () => {
  test("<repo>/.git, a module's git dir, a bare repository and .claude are refused; the work tree is not", () => {
    const root = tempDir("workdir-gitdir");
    const g = { home: join(root, "home"), protectedDirs: [] };
    const repo = join(root, "repo");
    for (const d of [
      ".git/objects",
      ".git/refs",
      ".git/modules/sub/objects",
      ".git/modules/sub/refs",
      ".claude/skills",
    ]) {
      mkdirSync(join(repo, d), { recursive: true });
    }
    writeFileSync(join(repo, ".git/HEAD"), "ref: refs/heads/main\n");
    mkdirSync(join(root, "bare.git/objects"), { recursive: true });
    mkdirSync(join(root, "bare.git/refs"));
    writeFileSync(join(root, "bare.git/HEAD"), "ref: refs/heads/main\n");
    for (const dir of [
      join(repo, ".git"),
      join(repo, ".git/modules/sub"),
      join(root, "bare.git"),
      join(repo, ".claude/skills"),
    ]) {
      let msg = "";
      try {
        checkWorkdir(dir, g);
      } catch (e) {
        if (!isDlError(e, "workdir_forbidden")) throw e;
        msg = e.message;
      }
      expect(msg, dir).toContain("pass the project's work tree instead");
    }
    expect(checkWorkdir(repo, g)).toBe(repo);
  });
});

describe("a workdir that is, or lies inside, a folder dl reads as instructions", () => {
  test("the agent definitions dir and CODEX_HOME (and a folder inside them) are refused naming the setting", () => {
    const root = tempDir("workdir-dl-reads");
    const home = join(root, "home");
    const paths = resolveStatePaths({
      platform: "linux",
      cwd: root,
      home,
      codexHome: join(root, "proj", "codex-home"),
      jobStores: PROVIDERS,
      overrides: { agentsDir: join(root, "proj", "agents") },
      isolation: false,
    });
    for (const d of ["proj/agents/sub", "proj/codex-home/sub", "proj/src"])
      mkdirSync(join(root, d), { recursive: true });
    const guard = workdirGuard(paths);
    const refusal = (dir: string) => {
      try {
        checkWorkdir(dir, guard);
      } catch (e) {
        if (!isDlError(e, "workdir_forbidden")) throw e;
        return { variable: e.data.variable, reason: e.data.reason, named: e.message.includes(String(e.data.variable)) };
      }
      return "accepted";
    };
    const agents = { variable: "DELEGATE_LOCAL_AGENTS_DIR", reason: "dl_reads", named: true };
    const codex = { variable: "CODEX_HOME", reason: "dl_reads", named: true };
    expect(refusal(join(root, "proj/agents"))).toEqual(agents);
    expect(refusal(join(root, "proj/agents/sub"))).toEqual(agents);
    expect(refusal(join(root, "proj/codex-home"))).toEqual(codex);
    expect(refusal(join(root, "proj/codex-home/sub"))).toEqual(codex);
    // The project that holds them is an ordinary workdir (the jail and the write tools keep them read-only).
    expect(checkWorkdir(join(root, "proj"), guard)).toBe(join(root, "proj"));
    expect(checkWorkdir(join(root, "proj/src"), guard)).toBe(join(root, "proj/src"));
  });
});

describe("a checkout Claude Code keeps in <project>/.claude/worktrees", () => {
  /** A repository with one commit, a linked worktree where `claude --worktree feature` puts it, and a plain folder beside it. */
  function claudeWorktree() {
    const root = tempDir("workdir-claude-wt");
    const repo = join(root, "repo");
    mkdirSync(join(repo, "src"), { recursive: true });
    writeFileSync(join(repo, "src/a.txt"), "a\n");
    const git = (...args: string[]) => {
      const r = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: repo });
      if (r.exitCode !== 0) throw new Error(r.stderr.toString());
    };
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "one");
    git("worktree", "add", "-q", ".claude/worktrees/feature");
    mkdirSync(join(repo, ".claude/worktrees/plain/src"), { recursive: true });
    mkdirSync(join(repo, ".claude/worktrees/feature/.vscode"));
    mkdirSync(join(repo, ".claude/worktrees/feature/.claude"));
    return { g: { home: join(root, "home"), protectedDirs: [] }, repo, wt: join(repo, ".claude/worktrees") };
  }

  test("the checkout and a folder inside it are work trees; .claude/worktrees, a plain folder there and the checkout's own .claude/.vscode are refused", () => {
    const { g, wt } = claudeWorktree();
    expect(checkWorkdir(join(wt, "feature"), g)).toBe(join(wt, "feature"));
    expect(checkWorkdir(join(wt, "feature/src"), g)).toBe(join(wt, "feature/src"));
    for (const dir of [
      wt,
      join(wt, "plain"),
      join(wt, "plain/src"),
      join(wt, "feature/.vscode"),
      join(wt, "feature/.claude"),
    ]) {
      expect(
        forbidden(() => checkWorkdir(dir, g)),
        dir,
      ).toBe("workdir_forbidden");
    }
  });

  test("a .git that only looks like a checkout's (a link to a gitfile, an empty folder) does not open .claude", () => {
    const { g, repo, wt } = claudeWorktree();
    writeFileSync(join(repo, "gitfile"), "gitdir: ../../../.git/worktrees/feature\n");
    symlinkSync(join(repo, "gitfile"), join(wt, "plain/.git"));
    mkdirSync(join(wt, "empty/.git"), { recursive: true });
    for (const dir of [join(wt, "plain"), join(wt, "empty")]) {
      expect(
        forbidden(() => checkWorkdir(dir, g)),
        dir,
      ).toBe("workdir_forbidden");
    }
  });
});
