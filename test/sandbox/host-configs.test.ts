import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { namedByHost } from "../../src/sandbox/host-configs.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { noMoves, tree } from "./file-tree.ts";

/**
 * Claude Code's configurations kept outside the work tree that run commands in it
 * (src/sandbox/host-configs.ts): the user's settings, the MCP servers of ~/.claude.json
 * (the user's and a project's local ones), and a linked worktree's main checkout's
 * `.claude/settings.local.json`. What they run of the tree is kept read-only by the jail
 * and refused to the write tools, as a project configuration's is.
 */

/** A home whose Claude Code state names `project` (its local MCP server) and runs npx in every project. */
function claudeHome(project: string, other: string): string {
  const home = realpathSync(tempDir("host-configs-home"));
  mkdirSync(join(home, ".claude"));
  const statusLine = { type: "command", command: "npx -y ccusage statusline" };
  writeFileSync(join(home, ".claude/settings.json"), JSON.stringify({ statusLine }));
  const server = (script: string) => ({ type: "stdio", command: "node", args: [script], env: {} });
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      mcpServers: { c7: { type: "stdio", command: "npx", args: ["-y", "@upstash/context7-mcp"] } },
      projects: {
        [project]: { mcpServers: { srv: server("tools/srv.js") }, allowedTools: [] },
        [other]: { mcpServers: { theirs: server("tools/theirs.js") } },
      },
    }),
  );
  return home;
}

/** `files` (relative path → text) written under `root`. */
function writeTree(root: string, files: Record<string, string>): void {
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), text);
  }
}

/** What Claude Code's configurations outside the tree name of `w` (workdir-relative), read from `where`. */
function namedOf(w: string, where: { home?: string; claudeDir?: string; managedDir?: string }): string[] {
  const places = { workdir: w, top: null, toplevel: w, mainRoot: null, ...where };
  return namedByHost(places, () => false).files.map((f) => f.slice(w.length + 1));
}

async function git(cwd: string, ...args: string[]) {
  const env = { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x" };
  const r = await runGroup({
    argv: ["git", ...args],
    cwd,
    env: { ...env, GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" },
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

describe("Claude Code's configurations outside the tree", () => {
  test("the user's settings and ~/.claude.json's servers: what they run here is read-only and refused; another project's server is not", async () => {
    const w = tree({ "tools/srv.js": "", "tools/theirs.js": "", "package.json": '{"name":"p"}', "src/a.js": "" });
    const home = claudeHome(w, realpathSync(tempDir("host-configs-other")));
    const env = { PATH: "/usr/bin:/bin", HOME: home };
    const guard = await prepareTreeGuard(w, { home, env, quarantine: noMoves });
    expect(guard.keptReadOnly).toContain("tools/srv.js");
    expect(guard.keptReadOnly).not.toContain("tools/theirs.js");
    expect(guard.keptReadOnly).not.toContain("src/a.js");
    await guard.finish();
    const p = { writable: [], gitEnv: env };
    for (const path of ["tools/srv.js", "node_modules/.bin/ccusage", "node_modules/ccusage/index.js"])
      expect(await refusedWrite(w, join(w, path), p), path).toContain("Claude Code's configuration outside the tree");
    expect(await refusedWrite(w, join(w, "node_modules/@upstash/context7-mcp/index.js"), p)).toContain("path_refused");
    expect(await refusedWrite(w, join(w, "tools/theirs.js"), p)).toBeNull();
    expect(await refusedWrite(w, join(w, "src/a.js"), p)).toBeNull();
    // The user may still let delegates write one (DELEGATE_WRITABLE_TOOL_CONFIG).
    expect(await refusedWrite(w, join(w, "tools/srv.js"), { ...p, writable: ["tools/srv.js"] })).toBeNull();
  });

  test("a new file the user's npx would run, made by a job, fails it and is moved out", async () => {
    const w = tree({ "package.json": '{"name":"p"}' });
    const home = claudeHome(w, realpathSync(tempDir("host-configs-other")));
    const out = realpathSync(tempDir("host-configs-q"));
    const guard = await prepareTreeGuard(w, {
      home,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      quarantine: () => out,
    });
    mkdirSync(join(w, "node_modules/.bin"), { recursive: true });
    writeFileSync(join(w, "node_modules/.bin/ccusage"), "#!/bin/sh\n");
    const verdict = await guard.finish();
    expect(verdict.tamper?.changed).toContain("node_modules/.bin/ccusage (new)");
  });

  test("settings.json a link (home-manager, stow, chezmoi): read through it; a link into the tree keeps its target and the tree's links as configuration", () => {
    const w = tree({ "scripts/status.sh": "", "dotfiles/claude-settings.json": "", "src/a.js": "" });
    const hook = (command: string) => ({ hooks: { SessionStart: [{ hooks: [{ type: "command", command }] }] } });
    // Outside the tree: the user's dotfiles checkout elsewhere.
    const dots = realpathSync(tempDir("host-configs-dots"));
    writeFileSync(join(dots, "settings.json"), JSON.stringify(hook("sh scripts/status.sh")));
    const home = realpathSync(tempDir("host-configs-linked"));
    mkdirSync(join(home, ".claude"));
    symlinkSync(join(dots, "settings.json"), join(home, ".claude/settings.json"));
    expect(namedOf(w, { home, managedDir: join(home, "none") })).toEqual(["scripts/status.sh"]);
    // Into the tree, through a link of the tree: the file and the link are the user's settings.
    writeFileSync(join(w, "dotfiles/claude-settings.json"), JSON.stringify(hook("sh scripts/status.sh")));
    symlinkSync("claude-settings.json", join(w, "dotfiles/current.json"));
    const home2 = realpathSync(tempDir("host-configs-linked"));
    mkdirSync(join(home2, ".claude"));
    symlinkSync(join(w, "dotfiles/current.json"), join(home2, ".claude/settings.json"));
    expect(namedOf(w, { home: home2, managedDir: join(home2, "none") }).sort()).toEqual([
      "dotfiles/claude-settings.json",
      "dotfiles/current.json",
      "scripts/status.sh",
    ]);
  });

  test("the administrator's managed settings and their drop-ins run in every project too", () => {
    const w = tree({ "tools/audit.sh": "", "tools/policy.sh": "", "tools/mine.sh": "" });
    const managed = realpathSync(tempDir("host-configs-managed"));
    mkdirSync(join(managed, "managed-settings.d"));
    const hook = (command: string) => ({ hooks: { SessionStart: [{ hooks: [{ type: "command", command }] }] } });
    writeFileSync(join(managed, "managed-settings.json"), JSON.stringify(hook("bash tools/audit.sh")));
    writeFileSync(join(managed, "managed-settings.d/10-policy.json"), JSON.stringify(hook("bash tools/policy.sh")));
    const files = namedOf(w, { managedDir: managed });
    expect(files.sort()).toEqual(["tools/audit.sh", "tools/policy.sh"]);
  });

  test("from the main checkout: a .claude/worktrees checkout's own hook runs npx, which walks up to the workdir's node_modules/.bin", async () => {
    const main = tree({ "package.json": '{"name":"p"}', ".gitignore": "node_modules/\n" }, "host-configs-nested");
    await git(main, "init", "-q");
    await git(main, "add", ".");
    await git(main, "commit", "-qm", "one");
    await git(main, "worktree", "add", "-q", "-b", "feature", ".claude/worktrees/feature");
    const wt = join(main, ".claude/worktrees/feature");
    mkdirSync(join(wt, ".claude"));
    const npx = { type: "command", command: "npx -y lintx" };
    writeFileSync(join(wt, ".claude/settings.json"), JSON.stringify({ hooks: { SessionStart: [{ hooks: [npx] }] } }));
    const env = { PATH: "/usr/bin:/bin", HOME: realpathSync(tempDir("host-configs-empty-home")) };
    expect(await refusedWrite(main, join(main, "node_modules/.bin/lintx"), { writable: [], gitEnv: env })).toContain(
      "path_refused",
    );
    expect(await refusedWrite(main, join(main, "node_modules/.bin/other"), { writable: [], gitEnv: env })).toBeNull();
    const out = realpathSync(tempDir("host-configs-q"));
    const guard = await prepareTreeGuard(main, { home: env.HOME, env, quarantine: () => out });
    mkdirSync(join(main, "node_modules/.bin"), { recursive: true });
    writeFileSync(join(main, "node_modules/.bin/lintx"), "#!/bin/sh\n");
    expect((await guard.finish()).tamper?.changed).toContain("node_modules/.bin/lintx (new)");
  });

  test("an installed plugin's hooks, MCP servers and its agents' and skills' hooks run in every project; its own scripts are its", () => {
    const w = tree({ "package.json": '{"name":"p"}' });
    const home = realpathSync(tempDir("host-configs-plugin-home"));
    const plugin = realpathSync(tempDir("host-configs-plugin"));
    const hook = (command: string) => ({ hooks: { SessionStart: [{ hooks: [{ type: "command", command }] }] } });
    const files: Record<string, string> = {
      ".claude-plugin/plugin.json": JSON.stringify({
        name: "fmt",
        hooks: "./cfg/hooks.json",
        mcpServers: { p: { command: "node", args: ["tools/pmcp.js"] } },
      }),
      "cfg/hooks.json": JSON.stringify(hook("bash tools/custom.sh")),
      "hooks/hooks.json": JSON.stringify(hook("npx --no fmtx")),
      "agents/a.md":
        "---\nname: a\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: bash tools/agent-hook.sh\n---\nbash tools/body-is-prose.sh\n",
      "skills/s/SKILL.md":
        "---\nname: s\nhooks:\n  Stop:\n    - hooks:\n        - command: bash tools/skill-hook.sh\n---\n",
      "scripts/own.sh": "bash tools/own-script.sh\n",
    };
    writeTree(plugin, files);
    mkdirSync(join(home, ".claude/plugins"), { recursive: true });
    const installed = { version: 2, plugins: { "fmt@team": [{ scope: "user", installPath: plugin }] } };
    writeFileSync(join(home, ".claude/plugins/installed_plugins.json"), JSON.stringify(installed));
    const named = namedOf(w, { home, managedDir: join(home, "none") });
    for (const f of [
      "tools/custom.sh",
      "tools/pmcp.js",
      "node_modules/.bin/fmtx",
      "tools/agent-hook.sh",
      "tools/skill-hook.sh",
    ])
      expect(named).toContain(f);
    expect(named).not.toContain("tools/body-is-prose.sh");
    expect(named).not.toContain("tools/own-script.sh");
  });

  test("CLAUDE_CONFIG_DIR moves the user's settings, .claude.json and plugins; managed-mcp.json and the user's own agents, skills and commands count", () => {
    const w = tree({ "package.json": '{"name":"p"}' });
    const home = realpathSync(tempDir("host-configs-home-unused"));
    const cfg = realpathSync(tempDir("host-configs-cfg"));
    const managed = realpathSync(tempDir("host-configs-managed2"));
    const hook = (command: string) =>
      JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command }] }] } });
    const front = (command: string) =>
      `---\nname: x\nhooks:\n  Stop:\n    - hooks:\n        - command: ${command}\n---\n`;
    const files: Record<string, string> = {
      "settings.json": hook("bash tools/cfg-settings.sh"),
      ".claude.json": JSON.stringify({ mcpServers: { u: { command: "node", args: ["tools/cfg-mcp.js"] } } }),
      "agents/helper.md": front("bash tools/agent.sh"),
      "skills/s/SKILL.md": front("bash tools/skill.sh"),
      "commands/team/deploy.md": front("bash tools/command.sh"),
    };
    writeTree(cfg, files);
    writeFileSync(
      join(managed, "managed-mcp.json"),
      JSON.stringify({ mcpServers: { corp: { command: "node", args: ["tools/corp.js"] } } }),
    );
    const named = namedOf(w, { home, claudeDir: cfg, managedDir: managed });
    expect(named.sort()).toEqual(
      ["agent.sh", "cfg-mcp.js", "cfg-settings.sh", "command.sh", "corp.js", "skill.sh"].map((f) => `tools/${f}`),
    );
  });

  test("a plugin's monitors, LSP servers and the component paths its plugin.json names", () => {
    const w = tree({ "package.json": '{"name":"p"}' });
    const cfg = realpathSync(tempDir("host-configs-cfg2"));
    const plugin = realpathSync(tempDir("host-configs-plugin2"));
    const files: Record<string, string> = {
      ".claude-plugin/plugin.json": JSON.stringify({
        name: "w",
        agents: "./my-agents",
        experimental: { monitors: "./m.json" },
      }),
      "monitors/monitors.json": JSON.stringify([{ name: "w", command: "bash tools/mon.sh" }]),
      "m.json": JSON.stringify([{ name: "v", command: "bash tools/mon2.sh" }]),
      ".lsp.json": JSON.stringify({ ts: { command: "node", args: ["tools/lsp.js"] } }),
      "my-agents/a.md": "---\nname: a\nhooks:\n  Stop:\n    - hooks:\n        - command: bash tools/my-agent.sh\n---\n",
    };
    writeTree(plugin, files);
    mkdirSync(join(cfg, "plugins"));
    const installed = {
      version: 2,
      plugins: { "w@team": [{ scope: "project", projectPath: "/elsewhere", installPath: plugin }] },
    };
    writeFileSync(join(cfg, "plugins/installed_plugins.json"), JSON.stringify(installed));
    const named = namedOf(w, { claudeDir: cfg, managedDir: join(cfg, "none") });
    expect(named.sort()).toEqual(["tools/lsp.js", "tools/mon.sh", "tools/mon2.sh", "tools/my-agent.sh"]);
  });

  test("node's preloads by name, in a settings' env NODE_OPTIONS or a server's argv: the project's copy of the package, there or not", () => {
    const w = tree({ "package.json": '{"name":"p"}', "node_modules/tsx/package.json": '{"name":"tsx"}' });
    const cfg = realpathSync(tempDir("host-configs-preload"));
    const settings = {
      env: { NODE_OPTIONS: "--require dotenv/config --max-old-space-size=4096" },
      hooks: { Stop: [{ hooks: [{ type: "command", command: "node /opt/notify.js" }] }] },
    };
    writeFileSync(join(cfg, "settings.json"), JSON.stringify(settings));
    const state = {
      mcpServers: { s: { command: "node", args: ["--import", "tsx", "--loader=@acme/esm/loader", "/opt/srv.ts"] } },
    };
    writeFileSync(join(cfg, ".claude.json"), JSON.stringify(state));
    const named = namedOf(w, { claudeDir: cfg, managedDir: join(cfg, "none") });
    for (const f of ["node_modules/dotenv", "node_modules/tsx", "node_modules/@acme/esm"]) expect(named).toContain(f);
    expect(named.some((f) => f.includes("max-old-space-size"))).toBe(false);
  });

  test("a linked worktree: the main checkout's .claude/settings.local.json runs its hook's script in the worktree", async () => {
    const main = tree({ "a.txt": "a\n" }, "host-configs-main");
    await git(main, "init", "-q");
    await git(main, "add", ".");
    await git(main, "commit", "-qm", "one");
    await git(main, "worktree", "add", "-q", ".claude/worktrees/feature");
    const hook = { type: "command", command: "bash scripts/hello.sh" };
    writeFileSync(
      join(main, ".claude/settings.local.json"),
      JSON.stringify({ hooks: { SessionStart: [{ hooks: [hook] }] } }),
    );
    const wt = join(main, ".claude/worktrees/feature");
    const env = { PATH: "/usr/bin:/bin", HOME: realpathSync(tempDir("host-configs-empty-home")) };
    const p = { writable: [], gitEnv: env };
    expect(await refusedWrite(wt, join(wt, "scripts/hello.sh"), p)).toContain("settings.local.json");
    expect(await refusedWrite(wt, join(wt, "scripts/other.sh"), p)).toBeNull();
    // The main checkout itself reads its own settings as a project configuration (config-named.ts), not as another's.
    expect(await refusedWrite(main, join(main, "scripts/hello.sh"), p)).toContain("path_refused");
  });
});
