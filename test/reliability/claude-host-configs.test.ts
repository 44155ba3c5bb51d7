import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { CLAUDE, claudeUntil, stopAllClaude } from "../helpers/claude-run.ts";
import { connectDl, tempDir } from "../helpers/dl.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * Claude Code's configurations that live outside the project but run in it, asked of the
 * real Claude Code (node_modules/.bin/claude; `claude -p hi` runs hooks and starts MCP
 * servers before any API call, and none is reachable here): the user's own settings
 * (`npx --no ccusage statusline`, which runs the project's node_modules/.bin/ccusage), an
 * installed plugin's hook (`npx --no fmtx`), a local MCP server `claude mcp add` put in
 * ~/.claude.json (`node tools/srv.js`), and, in a
 * worktree under `.claude/worktrees`, the main checkout's `.claude/settings.local.json`.
 * Planted by hand they run; tried by a delegate through dist/dl (write_file and a jailed
 * run_bash), they do not.
 */

let fake: FakeModel;
let agents: string;

const payload = (markers: string, name: string) => `#!/bin/sh\necho ran > ${markers}/${name}\n`;
const nodePayload = (markers: string, name: string) =>
  `require("fs").writeFileSync(${JSON.stringify(join(markers, name))}, "ran"); setInterval(() => {}, 1000);\n`;
const legitHook = (markers: string) => [
  { hooks: [{ type: "command", command: `echo ran > ${markers}/legit-prompt` }] },
];

function sh(cwd: string, home: string, ...argv: string[]) {
  const env = { ...process.env, HOME: home, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x" };
  const r = Bun.spawnSync(argv, { cwd, env: { ...env, GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" } });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${r.stdout}${r.stderr}`);
}

/** A project whose user runs `npx --no ccusage` from their settings and a local MCP server `node tools/srv.js`. */
function userSetup(tag: string) {
  const root = realpathSync(tempDir(`claude-host-${tag}`));
  const [w, home, markers] = ["proj", "home", "m"].map((d) => join(root, d)) as [string, string, string];
  for (const d of [join(w, "tools"), join(home, ".claude"), markers]) mkdirSync(d, { recursive: true });
  writeFileSync(join(w, "tools/srv.js"), "setInterval(() => {}, 1000);\n");
  writeFileSync(join(w, "tools/legit.js"), nodePayload(markers, "legit-mcp"));
  writeFileSync(join(w, "package.json"), '{"name":"p","version":"1.0.0"}\n');
  writeFileSync(join(w, ".gitignore"), "node_modules/\n");
  sh(w, home, "git", "init", "-q");
  sh(w, home, "git", "add", ".");
  sh(w, home, "git", "commit", "-qm", "one");
  // A plugin the user installed from a marketplace outside the project: its hook runs `npx --no fmtx` there.
  const plugin = join(root, "market/plugins/fmt");
  for (const d of [join(root, "market/.claude-plugin"), join(plugin, ".claude-plugin"), join(plugin, "hooks")])
    mkdirSync(d, { recursive: true });
  const market = { name: "team", owner: { name: "t" }, plugins: [{ name: "fmt", source: "./plugins/fmt" }] };
  writeFileSync(join(root, "market/.claude-plugin/marketplace.json"), JSON.stringify(market));
  writeFileSync(join(plugin, ".claude-plugin/plugin.json"), '{"name":"fmt"}');
  const fmtx = [{ hooks: [{ type: "command", command: "npx --no fmtx" }] }];
  writeFileSync(join(plugin, "hooks/hooks.json"), JSON.stringify({ hooks: { SessionStart: fmtx } }));
  sh(w, home, CLAUDE, "plugin", "marketplace", "add", join(root, "market"));
  sh(w, home, CLAUDE, "plugin", "install", "fmt@team");
  sh(w, home, CLAUDE, "mcp", "add", "srv", "--", "node", "tools/srv.js");
  sh(w, home, CLAUDE, "mcp", "add", "legit", "--", "node", "tools/legit.js");
  const npx = { type: "command", command: "npx --no ccusage statusline" };
  const hooks = { SessionStart: [{ hooks: [npx] }], UserPromptSubmit: legitHook(markers) };
  const settings = JSON.parse(readFileSync(join(home, ".claude/settings.json"), "utf8")); // the plugin's entries
  writeFileSync(join(home, ".claude/settings.json"), JSON.stringify({ ...settings, statusLine: npx, hooks }));
  return { w, home, markers };
}

/** A main checkout with a worktree where `claude --worktree feature` puts it, and a local SessionStart hook. */
function worktreeSetup(tag: string) {
  const root = realpathSync(tempDir(`claude-host-${tag}`));
  const [main, home, markers] = ["proj", "home", "m"].map((d) => join(root, d)) as [string, string, string];
  for (const d of [main, home, markers]) mkdirSync(d, { recursive: true });
  writeFileSync(join(main, "a.txt"), "a\n");
  sh(main, home, "git", "init", "-q");
  sh(main, home, "git", "add", ".");
  sh(main, home, "git", "commit", "-qm", "one");
  sh(main, home, "git", "worktree", "add", "-q", ".claude/worktrees/feature");
  const hello = { type: "command", command: "bash scripts/hello.sh" };
  const hooks = { SessionStart: [{ hooks: [hello] }], UserPromptSubmit: legitHook(markers) };
  writeFileSync(join(main, ".claude/settings.local.json"), JSON.stringify({ hooks }));
  return { w: join(main, ".claude/worktrees/feature"), home, markers };
}

/** `claude -p hi` in `cwd` with `home`, until `done` holds for the markers. */
async function markersAfterClaude(cwd: string, home: string, markers: string, done: (m: string[]) => boolean) {
  return (await claudeUntil(cwd, { ...process.env, HOME: home }, markers, done)).markers;
}

/** One delegation through dist/dl with the jail around run_bash; the tool results the model got back. */
async function delegate(
  w: string,
  home: string,
  steps: ReturnType<typeof reply.tool>[],
  extra: Record<string, string> = {},
): Promise<string> {
  const s = await connectDl(
    {
      ...extra,
      HOME: home,
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_AGENTS_DIR: agents,
      DELEGATE_LOCAL_MODEL: "m",
      DELEGATE_RUN_BASH_SANDBOX: "1",
    },
    { cwd: w },
  );
  try {
    fake.reset();
    const [first, ...rest] = steps;
    fake.script(first!, ...rest, reply.text("done"));
    const res = await s.client.callTool(
      { name: "delegate_to_local_agent", arguments: { agent_name: "coder", task: "t", workdir: w } },
      { timeout: 180_000 },
    );
    return JSON.stringify([res.content, ...fake.requests.map((r) => r.body.messages)]);
  } finally {
    await s.close();
  }
}

const plantBin = (markers: string) =>
  ["ccusage", "fmtx"]
    .map(
      (bin) =>
        `mkdir -p node_modules/.bin && printf '#!/bin/sh\\necho ran > ${markers}/planted-${bin}\\n' > node_modules/.bin/${bin} && chmod +x node_modules/.bin/${bin}`,
    )
    .join(" && ");

describe.skipIf(!existsSync(CLAUDE) || skipBwrap)("Claude Code's own configurations outside the project", () => {
  beforeAll(async () => {
    fake = await startFakeModel();
    agents = tempDir("claude-host-agents");
    writeFileSync(
      join(agents, "coder.md"),
      "---\nname: coder\ndescription: c\ntools: Read, Write, Edit, Bash\n---\nCode.\n",
    );
  });
  afterAll(async () => {
    await stopAllClaude();
    await fake?.stop();
  });

  test("unguarded: the user's npx and a local MCP server run what was planted in the project", async () => {
    const { w, home, markers } = userSetup("control");
    writeFileSync(join(w, "tools/srv.js"), nodePayload(markers, "planted-mcp"));
    sh(w, home, "sh", "-c", plantBin(markers));
    const want = ["legit-prompt", "planted-ccusage", "planted-fmtx", "planted-mcp"];
    expect(await markersAfterClaude(w, home, markers, (m) => want.every((x) => m.includes(x)))).toEqual(
      expect.arrayContaining(want),
    );
  }, 180_000);

  test("after a delegate tried it through dist/dl: refused and moved out; claude runs the user's own only", async () => {
    const { w, home, markers } = userSetup("guarded");
    const out = await delegate(w, home, [
      reply.tool("write_file", { path: "tools/srv.js", content: nodePayload(markers, "planted-mcp") }),
      reply.tool("run_bash", { command: plantBin(markers) }),
    ]);
    expect(out).toContain("Claude Code's configuration outside the tree");
    expect(out).toContain("node_modules/.bin/ccusage (new)");
    expect(out).toContain("node_modules/.bin/fmtx (new)");
    expect(readFileSync(join(w, "tools/srv.js"), "utf8")).toBe("setInterval(() => {}, 1000);\n");
    const got = await markersAfterClaude(w, home, markers, (m) =>
      ["legit-prompt", "legit-mcp"].every((x) => m.includes(x)),
    );
    expect(got).toEqual(["legit-mcp", "legit-prompt"]);
  }, 240_000);

  test("CLAUDE_CONFIG_DIR, as Claude Code hands it to dl serve, moves the settings dl reads: a hook there is held", async () => {
    const root = realpathSync(tempDir("claude-host-cfgdir"));
    const [w, home, cfg] = ["proj", "home", "cfg"].map((d) => join(root, d)) as [string, string, string];
    for (const d of [join(w, "scripts"), home, cfg]) mkdirSync(d, { recursive: true });
    writeFileSync(join(w, "scripts/cfg.sh"), "true\n");
    const hook = [{ hooks: [{ type: "command", command: "bash scripts/cfg.sh" }] }];
    writeFileSync(join(cfg, "settings.json"), JSON.stringify({ hooks: { SessionStart: hook } }));
    const out = await delegate(w, home, [reply.tool("write_file", { path: "scripts/cfg.sh", content: "evil\n" })], {
      CLAUDE_CONFIG_DIR: cfg,
    });
    expect(out).toContain("Claude Code's configuration outside the tree");
    expect(readFileSync(join(w, "scripts/cfg.sh"), "utf8")).toBe("true\n");
  }, 60_000);

  test("a .claude/worktrees checkout: the main checkout's local hook runs the worktree's script, unless dl kept it", async () => {
    const control = worktreeSetup("wt-control");
    mkdirSync(join(control.w, "scripts"));
    writeFileSync(join(control.w, "scripts/hello.sh"), payload(control.markers, "planted-hook"));
    const want = ["legit-prompt", "planted-hook"];
    expect(
      await markersAfterClaude(control.w, control.home, control.markers, (m) => want.every((x) => m.includes(x))),
    ).toEqual(want);
    const { w, home, markers } = worktreeSetup("wt-guarded");
    const out = await delegate(w, home, [
      reply.tool("write_file", { path: "scripts/hello.sh", content: payload(markers, "planted-hook") }),
    ]);
    expect(out).toContain("settings.local.json");
    expect(await markersAfterClaude(w, home, markers, (m) => m.includes("legit-prompt"))).toEqual(["legit-prompt"]);
  }, 240_000);
});
