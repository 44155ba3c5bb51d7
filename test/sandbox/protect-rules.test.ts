import { describe, expect, test } from "bun:test";
import { CHANGE_LIST_CAP, type ChangedFile, summarizeChanges } from "../../src/sandbox/change-summary.ts";
import { namedByConfig, parseConfigList, pathWords } from "../../src/sandbox/git-reach.ts";
import { scanTree, type TreeScan } from "../../src/sandbox/tree-scan.ts";
import { foldName, isDotGit, ruleForPath } from "../../src/sys/protected-names.ts";
import { tree as treeOf } from "./file-tree.ts";

const tree = (files: Record<string, string>) => treeOf(files, "protect-rules");

/** The pure parts of the tree guard: which names a rule covers, and what git's config names. */

describe("protect rules", () => {
  test("git metadata in every spelling a folding file system accepts", () => {
    for (const n of [".git", ".GIT", ".Git", ".g\u200cit", ".git.", ".git "]) expect(isDotGit(n)).toBe(true);
    expect(isDotGit(".gitignore")).toBe(false);
    expect(ruleForPath("a/.GIT/config")?.rule.id).toBe("git-metadata");
    expect(ruleForPath(".gitmodules")?.rule.id).toBe("git-metadata");
  });

  test("tool configuration anywhere in the tree, by the folder or file a host reads", () => {
    expect(ruleForPath(".claude/settings.local.json")).toMatchObject({ at: ".claude", rule: { id: "claude-code" } });
    expect(ruleForPath("pkg/.Claude/agents/coder.md")?.at).toBe("pkg/.Claude");
    expect(ruleForPath(".mcp.json")?.rule.id).toBe("claude-code");
    expect(ruleForPath(".vscode/tasks.json")?.rule.id).toBe("editor-config");
    expect(ruleForPath("x.code-workspace")?.rule.id).toBe("editor-config");
    expect(ruleForPath(".github/copilot-instructions.md")?.rule.id).toBe("agent-config");
    expect(ruleForPath("docs/copilot-instructions.md")).toBeNull(); // only under .github
    expect(ruleForPath(".github/workflows/ci.yml")).toBeNull();
    expect(ruleForPath("web/.envrc")?.rule.id).toBe("shell-env");
    expect(ruleForPath(".husky/pre-commit")?.rule.id).toBe("hook-manager");
    expect(ruleForPath("packages/a/.lintstagedrc.mjs")?.rule.id).toBe("hook-manager");
    expect(ruleForPath("lefthook.yml")?.rule.id).toBe("hook-manager");
    expect(ruleForPath(".config/lefthook.yaml")?.rule.id).toBe("hook-manager");
    expect(ruleForPath("src/index.ts")).toBeNull();
    expect(ruleForPath("package.json")).toBeNull();
    expect(foldName("CLAUDE.md")).toBe("claude.md");
  });

  test("tools' configurations that are code or name code, by the convention the tools share; never source files", () => {
    for (const p of [
      "eslint.config.js",
      "web/eslint.config.mts",
      "src/deep/eslint.config.cjs", // ESLint 10 looks from the linted file's folder up
      "prettier.config.mjs",
      ".prettierrc",
      ".prettierrc.json",
      ".prettierrc.cjs",
      "packages/ui/vite.config.ts",
      "vitest.config.mts",
      "tailwind.config.js",
      "babel.config.json",
      ".babelrc",
      ".eslintrc.yml",
      ".stylelintrc.json5",
      ".config/prettierrc.js",
      ".config/stylelintrc",
      ".pylintrc",
      ".npmrc",
      "Jest.Config.JS", // folded, as macOS compares names
      "pylintrc",
      "mypy.ini",
      ".mypy.ini",
      "svc/.flake8",
      "pytest.ini",
      "tox.ini",
      "pylintrc.toml",
      ".pytest.toml",
      "tox.toml",
      "vitest.workspace.ts",
      // Manifests the same loaders read as package.json (lint-staged's and prettier's package.yaml).
      "docs/package.yaml",
      "package.yml",
      "package.json5",
      // Runtimes' own configuration: bun's preload, deno's tasks and import maps.
      "bunfig.toml",
      ".bunfig.toml",
      "deno.json",
      "tools/deno.jsonc",
    ])
      expect({ p, rule: ruleForPath(p)?.rule.id }).toEqual({ p, rule: "tool-config" });
    // Names with a rule of their own keep it.
    expect(ruleForPath(".envrc")?.rule.id).toBe("shell-env");
    expect(ruleForPath(".miserc.toml")?.rule.id).toBe("shell-env");
    expect(ruleForPath(".lintstagedrc.js")?.rule.id).toBe("hook-manager");
    expect(ruleForPath(".exrc")?.rule.id).toBe("editor-config");
    for (const p of ["src/config.ts", "src/app.config", "config/index.js", "rc.js", "src/lib/rc.ts", "tsconfig.json"])
      expect({ p, rule: ruleForPath(p)?.rule.id ?? null }).toEqual({ p, rule: null });
    // An installed package's own configuration is no tool's project configuration; git's and the hosts' names still count there.
    for (const p of ["node_modules/pkg/.eslintrc.json", "web/node_modules/@s/b/rollup.config.js"])
      expect({ p, rule: ruleForPath(p)?.rule.id ?? null }).toEqual({ p, rule: null });
    // Only that exact name: `Node_Modules` is an ordinary folder to node and to ESLint's ignores on Linux.
    expect(ruleForPath("Node_Modules/x/eslint.config.js")?.rule.id).toBe("tool-config");
    expect(ruleForPath("node_modules/pkg/.git/config")?.rule.id).toBe("git-metadata");
    expect(ruleForPath("node_modules/pkg/.claude/settings.json")?.rule.id).toBe("claude-code");
  });

  test("the tree walk finds tools' configurations of the project, not those of installed packages", async () => {
    const root = tree({
      "web/eslint.config.js": "export default [];\n",
      "node_modules/pkg/.eslintrc.json": "{}\n",
      "node_modules/pkg/sub/babel.config.js": "module.exports = {};\n",
      "node_modules/pkg/.vscode/tasks.json": "{}\n",
    });
    const scan = await scanTree(root, { ignored: new Set() }); // no repository: nothing is ignored
    expect([...scan.ruleEntries.keys()].sort()).toEqual(["node_modules/pkg/.vscode", "web/eslint.config.js"]);
  });

  test("a build tool's own settings, which it reads from its folder and every folder above and which name programs it runs", () => {
    for (const p of [
      ".cargo/config.toml",
      "crates/x/.cargo/config",
      "rust-toolchain.toml",
      "rust/rust-toolchain",
      ".mvn/jvm.config",
      ".mvn/wrapper/maven-wrapper.jar",
      "gradle.properties",
      "gradle/wrapper/gradle-wrapper.properties",
      "gradle/wrapper/gradle-wrapper.jar",
      "Directory.Build.props",
      "src/Directory.Build.targets",
      "Directory.Packages.props",
      "global.json",
      "NuGet.Config",
      ".config/dotnet-tools.json",
      ".bundle/config",
      "uv.toml",
      ".python-version",
    ])
      expect({ p, rule: ruleForPath(p)?.rule.id }).toEqual({ p, rule: "toolchain-config" });
    // The project's own build files and sources are the job's to change; an installed package's settings are not the project's.
    for (const p of [
      "Cargo.toml",
      "src/config.toml",
      "config.toml",
      "build.gradle",
      "pom.xml",
      "app.csproj",
      "pyproject.toml",
    ])
      expect({ p, rule: ruleForPath(p) }).toEqual({ p, rule: null });
    expect(ruleForPath("node_modules/x/global.json")).toBeNull();
  });

  test("every place mise loads from a folder (its LOCAL_CONFIG_FILENAMES and MISE_ENV patterns), and no other file", () => {
    for (const p of [
      ".tool-versions",
      "mise.toml",
      ".mise.toml",
      "mise.local.toml",
      "mise.dev.toml",
      ".mise.dev.local.toml",
      ".rtx.toml",
      ".rtx.local.toml",
      ".miserc.toml",
      ".mise/config.toml",
      "mise/config.toml",
      "mise/config.local.toml",
      "mise/config.dev.toml",
      "mise/conf.d/tools.toml",
      ".config/mise.toml",
      ".config/mise.dev.toml",
      ".config/miserc.toml",
      ".config/mise/config.toml",
      ".config/mise/conf.d/x.toml",
      "pkg/mise/config.toml",
    ])
      expect({ p, rule: ruleForPath(p)?.rule.id }).toEqual({ p, rule: "shell-env" });
    for (const p of ["mise/README.md", "src/mise/lib.rs", "config.toml", "tool-versions.txt", "docs/mise.md"])
      expect({ p, rule: ruleForPath(p)?.rule.id }).toEqual({ p, rule: undefined });
  });
});

describe("what git's configuration names", () => {
  test("config list with origins; include paths relative to their file, other paths to the work tree", () => {
    const list = [
      "file:.git/config\0core.fsmonitor\n./tools/fsmon.sh\0",
      "file:.git/config\0include.path\n../shared.gitconfig\0",
      "file:/home/u/.gitconfig\0core.hookspath\n.husky/_\0",
      "file:.git/config\0remote.origin.url\nhttps://example.test/a/b\0",
      "command line:\0alias.x\n!sh scripts/x.sh --flag\0",
    ].join("");
    const entries = parseConfigList(list);
    expect(entries[2]).toEqual({ origin: "/home/u/.gitconfig", key: "core.hookspath", value: ".husky/_" });
    const named = namedByConfig(entries, { toplevel: "/w", gitDir: "/w/.git", home: "/home/u" });
    expect(named.hooksDirs).toEqual(["/w/.husky/_"]);
    expect(named.named).toContain("/w/tools/fsmon.sh");
    expect(named.named).toContain("/w/shared.gitconfig"); // ../ from /w/.git
    expect(named.named).toContain("/w/scripts/x.sh");
    expect(named.named).toContain("/w/.git/config");
    expect(named.named.some((p) => p.includes("example.test"))).toBe(false);
  });

  test("bare file names in a value name files of the work tree's root; addresses, numbers and plain words do not", () => {
    const list = [
      "file:.git/config\0diff.conv.textconv\nsh conv.sh\0",
      "file:.git/config\0filter.fmt.clean\nnode .fmt-clean.js --stdin\0",
      "file:.git/config\0user.email\nu@example.test\0",
      "file:.git/config\0init.defaultbranch\nmain\0",
      "file:.git/config\0core.abbrev\n1.2\0",
    ].join("");
    const named = namedByConfig(parseConfigList(list), { toplevel: "/w", gitDir: "/w/.git", home: "/h" });
    expect(named.named).toContain("/w/conv.sh");
    expect(named.named).toContain("/w/.fmt-clean.js");
    expect(named.named.filter((p) => /example|main|1\.2|\/sh$/.test(p))).toEqual([]);
  });

  test("path words: paths, never URLs or options", () => {
    expect(pathWords('"./a b" --x=/etc/y ~/z https://h/p c/d')).toEqual(["./a", "/etc/y", "~/z", "c/d"]);
  });
});

test("the change summary counts everything and lists at most the cap, project files first", () => {
  const scan = (files: Record<string, string>): TreeScan => ({
    root: "/w",
    entries: new Map(Object.entries(files).map(([p, sig]) => [p, { kind: "file" as const, id: p, sig }])),
    gitEntries: new Map(),
    ruleEntries: new Map(),
    truncated: false,
  });
  const before: Record<string, string> = { "a.ts": "1", "b.ts": "1", "node_modules/x/i.js": "1" };
  const after: Record<string, string> = { "a.ts": "2", "node_modules/x/i.js": "2" };
  for (let i = 0; i < CHANGE_LIST_CAP + 5; i++) after[`gen/${i}.txt`] = "1";
  const s = summarizeChanges(scan(before), scan(after), new Set(["node_modules"]));
  expect(s).toMatchObject({ added: CHANGE_LIST_CAP + 5, changed: 2, deleted: 1, truncated: true });
  expect(s.files).toHaveLength(CHANGE_LIST_CAP);
  expect(s.files[0]).toEqual({ path: "a.ts", change: "changed" } satisfies ChangedFile);
  expect(s.files.some((f) => f.path.startsWith("node_modules/"))).toBe(false);
});
