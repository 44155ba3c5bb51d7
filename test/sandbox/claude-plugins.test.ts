import { expect, test } from "bun:test";
import { join } from "node:path";
import { namedByToolConfig } from "../../src/sandbox/config-named.ts";
import { tree as treeOf } from "./file-tree.ts";

/**
 * Claude Code's plugins from the work tree (claude-plugins.ts): a marketplace folder the
 * project's settings declare and the plugin folders its marketplace.json names are named
 * whole by the settings (so bound read-only, refused to the write tools), and the scripts
 * outside them that their hooks run are followed; sources that are not the tree's are not.
 */

const tree = (files: Record<string, string>) => treeOf(files, "claude-plugins");

const named = (w: string, entry: string) =>
  namedByToolConfig(join(w, entry), { workdir: w, ignored: () => false })
    .files.map((f) => f.slice(w.length + 1))
    .sort();

const market = (plugins: unknown[], metadata?: unknown) => JSON.stringify({ name: "team", metadata, plugins });

test("a directory marketplace of the settings: its folder, each plugin folder, and the scripts its hooks run", () => {
  const w = tree({
    ".claude/settings.json": JSON.stringify({
      extraKnownMarketplaces: { team: { source: { source: "directory", path: "./tools/market" } } },
      enabledPlugins: { "fmt@team": true },
    }),
    "tools/market/.claude-plugin/marketplace.json": market([
      { name: "fmt", source: "./plugins/fmt" },
      { name: "gh", source: { source: "github", repo: "a/b" } },
      { name: "far", source: "https://example.com/x.git" },
    ]),
    "tools/market/plugins/fmt/hooks/hooks.json": JSON.stringify({
      hooks: { SessionStart: [{ hooks: [{ type: "command", command: "sh scripts/outside.sh" }] }] },
    }),
    "scripts/outside.sh": "true\n",
    "src/app.ts": "export {}\n",
  });
  const got = named(w, ".claude");
  expect(got).toContain("tools/market");
  expect(got).toContain("tools/market/plugins/fmt");
  expect(got).toContain("scripts/outside.sh");
  expect(got).not.toContain("src/app.ts");
});

test("a marketplace.json of the tree: plugins under its pluginRoot, `./` the root itself, none outside the tree", () => {
  const w = tree({
    "sub/.claude-plugin/marketplace.json": market(
      [
        { name: "a", source: "a" },
        { name: "self", source: "./" },
        { name: "out", source: "../../../etc" },
      ],
      { pluginRoot: "./plugins" },
    ),
    "sub/plugins/a/commands/x.md": "---\ndescription: x\n---\nx\n",
  });
  const got = named(w, "sub/.claude-plugin");
  expect(got).toContain("sub/plugins/a");
  expect(got).toContain("sub");
  expect(got.some((f) => f.startsWith(".."))).toBe(false);
});

test("a file source names its marketplace's folder; settings that are not JSON name nothing", () => {
  const w = tree({
    ".claude/settings.json": JSON.stringify({
      extraKnownMarketplaces: { m: { source: { source: "file", path: "mk/.claude-plugin/marketplace.json" } } },
    }),
    "mk/.claude-plugin/marketplace.json": market([{ name: "p", source: "./p" }]),
    "mk/p/.mcp.json": "{}",
    "other/.claude/settings.json": '{"extraKnownMarketplaces": {"m": {"source": {"source": "directory", "path": "x"',
    "other/x/a.txt": "a\n",
  });
  expect(named(w, ".claude")).toEqual(expect.arrayContaining(["mk", "mk/p"]));
  expect(named(w, "other/.claude")).not.toContain("other/x");
});
