import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { claudeHomeReads } from "../../src/sys/claude-home-reads.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { noMoves } from "./file-tree.ts";

/**
 * A plugin marketplace the user added with the real Claude Code (`claude plugin marketplace
 * add ./market`, then `claude plugin install`), named only by the user's own state under
 * HOME, no project setting: its folder is kept read-only in the jail and refused to the
 * write tools. (That Claude Code runs such a plugin's hooks at every session from the
 * folder is measured by jail-claude-real.test.ts's claude-plugin-hooks control.)
 */

const CLAUDE = new URL("../../node_modules/.bin/claude", import.meta.url).pathname;

function project(): { home: string; w: string; env: Record<string, string> } {
  const base = realpathSync(tempDir("claude-home-reads"));
  const home = join(base, "home");
  const w = join(base, "proj");
  const files: Record<string, string> = {
    "market/.claude-plugin/marketplace.json":
      '{"name":"team","owner":{"name":"t"},"plugins":[{"name":"fmt","source":"./plugins/fmt"}]}\n',
    "market/plugins/fmt/.claude-plugin/plugin.json": '{"name":"fmt"}\n',
    "market/plugins/fmt/hooks/hooks.json":
      '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"true"}]}]}}\n',
    "src/a.ts": "export {};\n",
  };
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(w, p)), { recursive: true });
    writeFileSync(join(w, p), text);
  }
  mkdirSync(home);
  return { home, w, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home } };
}

async function claude(args: string[], cwd: string, env: Record<string, string>): Promise<void> {
  const r = await runGroup({ argv: [CLAUDE, ...args], cwd, env, timeoutMs: 60_000 });
  if (r.exitCode !== 0) throw new Error(`claude ${args.join(" ")}: ${r.stderr.text()} ${r.stdout.text()}`);
}

const nothingMoved = noMoves;

describe.skipIf(!existsSync(CLAUDE))("a marketplace the user added, named only by ~/.claude", () => {
  test("the real claude writes known_marketplaces.json naming ./market; dl keeps it read-only and refuses writes in it", async () => {
    const { home, w, env } = project();
    await runGroup({ argv: ["git", "init", "-q"], cwd: w, env });
    const before = await prepareTreeGuard(w, { home, env, quarantine: nothingMoved });
    expect(before.keptReadOnly).not.toContain("market"); // no project setting names it
    await before.finish();
    await claude(["plugin", "marketplace", "add", "./market"], w, env);
    await claude(["plugin", "install", "fmt@team"], w, env);
    expect(existsSync(join(home, ".claude/plugins/known_marketplaces.json"))).toBe(true);
    expect(claudeHomeReads(join(home, ".claude")).map((d) => d.path)).toEqual([join(w, "market")]);
    const guard = await prepareTreeGuard(w, { home, env, quarantine: nothingMoved });
    expect(guard.keptReadOnly).toContain("market");
    expect((await guard.finish()).tamper).toBeNull();
    const p = { writable: [], gitEnv: env };
    const refusal = await refusedWrite(w, join(w, "market/plugins/fmt/hooks/hooks.json"), p);
    expect(refusal).toContain("loaded by Claude Code");
    expect(refusal).toContain("known_marketplaces.json (marketplace team)");
    expect(await refusedWrite(w, join(w, "src/a.ts"), p)).toBeNull();
    // Named by known_marketplaces.json alone (the settings no longer declare it): still read-only.
    writeFileSync(join(home, ".claude/settings.json"), JSON.stringify({ enabledPlugins: { "fmt@team": true } }));
    const again = await prepareTreeGuard(w, { home, env, quarantine: nothingMoved });
    expect(again.keptReadOnly).toContain("market");
    await again.finish();
  }, 120_000);

  test("a state file that is not JSON, a relative or missing path, another home: nothing named", () => {
    const { home } = project();
    mkdirSync(join(home, ".claude/plugins"), { recursive: true });
    writeFileSync(join(home, ".claude/plugins/known_marketplaces.json"), '{"a":{"installLocation":"market"},"b":{}}');
    writeFileSync(join(home, ".claude/settings.json"), "not json");
    expect(claudeHomeReads(join(home, ".claude"))).toEqual([]);
    expect(claudeHomeReads(undefined)).toEqual([]);
  });
});
