import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { namedByToolConfig } from "../../src/sandbox/config-named.ts";
import { tempDir } from "../helpers/dl.ts";
import { tree as treeOf } from "./file-tree.ts";

/**
 * What a protected configuration runs of the work tree (config-named.ts): the scripts it
 * names, what they name in turn, memory files' imports and the package.json scripts a
 * hook runs; and what it does not (a bare manifest name, prose, a debug launch).
 */

const tree = (files: Record<string, string>) => treeOf(files, "config-named");

const named = (w: string, entry: string, ignored: (abs: string) => boolean = () => false) => {
  const n = namedByToolConfig(join(w, entry), { workdir: w, ignored });
  return { files: n.files.map((f) => f.slice(w.length + 1)).sort(), scripts: n.npmScripts.map((s) => s.name) };
};

/** Each of `paths` is (or is not) among the named `files`; the path is in the message when one is not. */
const expectNamed = (files: string[], paths: string[], named: boolean) => {
  for (const p of paths) expect({ p, named: files.includes(p) }).toEqual({ p, named });
};

/** VS Code's own variable for the folder it opened. */
const VAR = "$" + "{workspaceFolder}";

describe("namedByToolConfig", () => {
  test("a Claude Code hook's scripts, with $CLAUDE_PROJECT_DIR, and what a script sources", () => {
    const w = tree({
      ".claude/settings.json": JSON.stringify({
        hooks: {
          PostToolUse: [{ hooks: [{ command: "sh ./scripts/fmt.sh" }, { command: '"$CLAUDE_PROJECT_DIR"/bin/b' }] }],
        },
      }),
      "scripts/fmt.sh": ". scripts/lib.sh\n",
      "scripts/lib.sh": "true\n",
      "bin/b": "#!/bin/sh\n",
      "src/app.ts": "x",
    });
    expect(named(w, ".claude").files).toEqual(["bin/b", "scripts/fmt.sh", "scripts/lib.sh"]);
  });

  test("a bare word counts only as a program: hook.js yes, package.json and README.md no", () => {
    const w = tree({
      ".pre-commit-config.yaml":
        "repos:\n- repo: local\n  hooks:\n  - id: x\n    entry: node hook.js\n    files: package.json\n    exclude: README.md\n",
      "hook.js": "",
      "package.json": "{}",
      "README.md": "",
    });
    expect(named(w, ".pre-commit-config.yaml").files).toEqual(["hook.js"]);
  });

  test("executable bare words count, in ignored folders only as an exact path; the user's own debug launches do not", () => {
    const w = tree({
      ".husky/pre-commit": "checker\nnode_modules/.bin/lint-staged\nhidden\n",
      checker: "#!/bin/sh\n",
      "node_modules/.bin/lint-staged": "",
      "node_modules/hidden": "#!/bin/sh\n",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own variable in a launch configuration
      ".vscode/launch.json": '{"configurations":[{"program":"${workspaceFolder}/src/main.ts"}]}',
      "src/main.ts": "",
    });
    chmodSync(join(w, "checker"), 0o755);
    const ignored = (abs: string) => abs.startsWith(join(w, "node_modules"));
    chmodSync(join(w, "node_modules/hidden"), 0o755);
    expect(named(w, ".husky", ignored).files).toEqual(["checker", "node_modules/.bin/lint-staged"]);
    expect(named(w, ".vscode").files).toEqual([]);
  });

  test("programs found by name: npx's and a script's node_modules/.bin chain, a link's chain, a folder put on PATH", () => {
    const ignored = (abs: string) => /\/(node_modules|\.venv)\//.test(abs);
    const w = tree({
      ".claude/settings.json": JSON.stringify({
        hooks: { S: [{ hooks: [{ command: "npx --yes lint-fix --fix" }, { command: "npm run lint" }] }] },
      }),
      "package.json": JSON.stringify({ scripts: { lint: "CI=1 fmt . && tsc" } }),
      "node_modules/lint-fix/bin.js": "",
      "node_modules/fmt/cli.js": "",
      "node_modules/other/index.js": "",
      ".vscode/settings.json": JSON.stringify({
        "python.defaultInterpreterPath": `${VAR}/.venv/bin/python`,
        "terminal.integrated.env.linux": { PATH: `${VAR}/tbin:$\{env:PATH}` },
      }),
      ".venv/bin/python3.12": "",
      ".envrc": "PATH_add bin\n",
    });
    mkdirSync(join(w, "node_modules/.bin"));
    symlinkSync("../lint-fix/bin.js", join(w, "node_modules/.bin/lint-fix"));
    symlinkSync("../fmt/cli.js", join(w, "node_modules/.bin/fmt"));
    symlinkSync("python3.12", join(w, ".venv/bin/python"));
    // npm's own settings file (absent: watched), every .bin entry npm looks up, absent ones
    // too (tsc), and the package folder each found bin runs from, whole (npx's lint-fix is
    // also a package it would run by that name). No other package (node_modules/other).
    expect(named(w, ".claude", ignored).files).toEqual([
      ".npmrc",
      "node_modules/.bin/fmt",
      "node_modules/.bin/lint-fix",
      "node_modules/.bin/node",
      "node_modules/.bin/sh",
      "node_modules/.bin/tsc",
      "node_modules/fmt",
      "node_modules/fmt/cli.js",
      "node_modules/lint-fix",
      "node_modules/lint-fix/bin.js",
    ]);
    expect(named(w, ".vscode", ignored).files).toEqual([".venv/bin/python", ".venv/bin/python3.12", "tbin"]);
    expect(named(w, ".envrc", ignored).files).toEqual(["bin"]);
  });

  test("packages a runner is handed by name, scoped or versioned; each manager's own files", () => {
    const w = tree({
      ".mcp.json": JSON.stringify({
        mcpServers: {
          ctx: { command: "npx", args: ["-y", "@acme/ctx-mcp@latest"] },
          fmt: { command: "pnpm", args: ["dlx", "prettier-srv@2.1.0", "--stdio"] },
          lint: { command: "yarn", args: ["lintit"] },
        },
      }),
      "node_modules/@acme/ctx-mcp/package.json": "{}",
      "node_modules/@acme/ctx-mcp/lib/srv.js": "",
      "node_modules/@acme/other/index.js": "",
    });
    // The scoped package's folder exists; prettier-srv's does not (watched: a job must not make
    // it). yarn's bare form runs a bin or a script, so only its .bin entry counts. Each
    // manager's files, absent ones too: yarn Berry's .env.yarn and Plug'n'Play loader among them.
    expect(named(w, ".mcp.json").files).toEqual([
      ".env.yarn",
      ".npmrc",
      ".pnp.cjs",
      ".pnp.loader.mjs",
      ".pnpmfile.cjs",
      ".yarnrc",
      ".yarnrc.yml",
      "node_modules/.bin/lintit",
      "node_modules/.bin/node",
      "node_modules/.bin/prettier-srv",
      "node_modules/.bin/sh",
      "node_modules/@acme/ctx-mcp",
      "node_modules/prettier-srv",
      "pnpm-workspace.yaml",
    ]);
  });

  test("a bin linked into a scoped package protects that package; lint-staged's tasks run their first word from .bin", () => {
    const w = tree({
      ".husky/pre-commit": "npx lint-staged\n",
      ".lintstagedrc": JSON.stringify({ "*.ts": ["eslint --fix", "prettier -w"], "*.md": "CI=1 mdlint" }),
      "node_modules/@tool/lint-staged/bin/cli.js": "",
      "node_modules/@tool/lint-staged/lib/run.js": "",
    });
    mkdirSync(join(w, "node_modules/.bin"));
    symlinkSync("../@tool/lint-staged/bin/cli.js", join(w, "node_modules/.bin/lint-staged"));
    expect(named(w, ".husky").files).toEqual([
      ".npmrc",
      "node_modules/.bin/lint-staged",
      "node_modules/.bin/node",
      "node_modules/.bin/sh",
      "node_modules/@tool/lint-staged",
      "node_modules/@tool/lint-staged/bin/cli.js",
      "node_modules/lint-staged",
    ]);
    expect(named(w, ".lintstagedrc").files).toEqual([
      "node_modules/.bin/eslint",
      "node_modules/.bin/mdlint",
      "node_modules/.bin/node",
      "node_modules/.bin/prettier",
      "node_modules/.bin/sh",
    ]);
  });

  test("a package a config runs names what it requires, as node finds it: nested or hoisted, scoped, peers, pnpm's links", () => {
    const pkg = (deps: Record<string, Record<string, unknown>>) => JSON.stringify({ name: "x", ...deps });
    const w = tree({
      ".husky/pre-commit": "node_modules/.bin/lint-staged\n",
      "node_modules/lint-staged/bin/cli.js": "require('commander')",
      "node_modules/lint-staged/package.json": pkg({
        dependencies: { commander: "^14", yaml: "^2" },
        optionalDependencies: { "@opt/native": "1" },
        devDependencies: { vitest: "3" }, // not loaded at run time: not named
      }),
      // lint-staged's own nested copy wins over the hoisted one; yaml is hoisted.
      "node_modules/lint-staged/node_modules/commander/package.json": pkg({ peerDependencies: { tslib: "2" } }),
      "node_modules/commander/index.js": "", // the hoisted copy node does not reach from lint-staged
      "node_modules/yaml/package.json": pkg({
        dependencies: { "../../escape": "1", "@scope/deep": "1" },
        // An optional peer, in peerDependenciesMeta only: loaded when it is there.
        peerDependenciesMeta: { "supports-color": { optional: true } },
      }),
      "node_modules/supports-color/index.js": "",
      "node_modules/@scope/deep/index.js": "",
      "node_modules/tslib/index.js": "",
      "node_modules/vitest/index.js": "",
      "node_modules/unrelated/index.js": "",
    });
    mkdirSync(join(w, "node_modules/.bin"));
    symlinkSync("../lint-staged/bin/cli.js", join(w, "node_modules/.bin/lint-staged"));
    const files = named(w, ".husky").files;
    expectNamed(
      files,
      [
        "node_modules/lint-staged",
        "node_modules/lint-staged/node_modules/commander",
        "node_modules/yaml",
        "node_modules/@scope/deep",
        "node_modules/tslib",
        "node_modules/supports-color",
        // Where node looks first, absent: a job that makes one is what would run, and the
        // files require() tries before a folder there (node_modules/yaml.js).
        "node_modules/lint-staged/node_modules/yaml",
        "node_modules/lint-staged/node_modules/yaml.js",
        "node_modules/yaml.js",
        "node_modules/yaml.json",
        "node_modules/yaml.node",
        "node_modules/yaml/node_modules/@scope/deep",
        "node_modules/lint-staged/node_modules/@opt/native",
        "node_modules/@opt/native",
      ],
      true,
    );
    expectNamed(files, ["node_modules/commander", "node_modules/vitest", "node_modules/unrelated"], false);
    expect(files.some((f) => f.includes("escape"))).toBe(false);

    // pnpm: node_modules/<pkg> is a link into .pnpm, whose siblings are its dependencies.
    const p = tree({
      ".claude/settings.json": JSON.stringify({ hooks: { Stop: [{ hooks: [{ command: "npx prettier -c ." }] }] } }),
      "node_modules/.pnpm/prettier@3/node_modules/prettier/package.json": pkg({ dependencies: { chalk: "5" } }),
      "node_modules/.pnpm/prettier@3/node_modules/prettier/bin.js": "",
      "node_modules/.pnpm/chalk@5/node_modules/chalk/index.js": "",
    });
    symlinkSync(".pnpm/prettier@3/node_modules/prettier", join(p, "node_modules/prettier"));
    symlinkSync("../../chalk@5/node_modules/chalk", join(p, "node_modules/.pnpm/prettier@3/node_modules/chalk"));
    mkdirSync(join(p, "node_modules/.bin"));
    symlinkSync("../prettier/bin.js", join(p, "node_modules/.bin/prettier"));
    const viaPnpm = named(p, ".claude").files;
    expect(viaPnpm).toContain("node_modules/.pnpm/prettier@3/node_modules/prettier");
    expect(viaPnpm).toContain("node_modules/.pnpm/prettier@3/node_modules/chalk");
    expect(viaPnpm).toContain("node_modules/.pnpm/chalk@5/node_modules/chalk");
  });

  test("a JavaScript file the host runs loads the packages it imports, installed ones whole; a tool's config, the tool", () => {
    const w = tree({
      "eslint.config.js": [
        'import js from "@eslint/js";',
        'import local from "./rules/index.js";',
        'import fs from "node:fs";',
        'import path from "path";',
        'const later = await import("@acme/plugin/sub");',
        "export default [js.configs.recommended, local];",
      ].join("\n"),
      "rules/index.js": 'module.exports = require("chalk");\n',
      "node_modules/@eslint/js/package.json": JSON.stringify({ name: "@eslint/js", dependencies: { globals: "1" } }),
      "node_modules/globals/index.js": "",
      "node_modules/@acme/plugin/sub.js": "",
      "node_modules/eslint/package.json": JSON.stringify({ name: "eslint" }), // what the editor's extension loads to read the config
      "node_modules/chalk/index.js": "",
      "node_modules/lodash/index.js": "",
      "node_modules/unrelated/index.js": "",
      "src/app.js": 'import lodash from "lodash";\n', // the app's code: the user's to review, not a config
      "web/vite.config.ts": 'import react from "not-installed";\nexport default {};\n',
    });
    const files = named(w, "eslint.config.js").files;
    expectNamed(
      files,
      [
        "rules/index.js",
        "node_modules/@eslint/js",
        "node_modules/globals",
        "node_modules/@acme/plugin",
        "node_modules/eslint",
        "node_modules/chalk",
      ],
      true,
    );
    expectNamed(
      files,
      ["node_modules/lodash", "node_modules/unrelated", "node_modules/path", "node_modules/fs"],
      false,
    );
    // Nothing installed by that name, nor vite: nothing named (installing it is an ordinary npm install);
    // a tool's own configuration leaves tsconfig.json the project's (the tool loads it, not bun or tsx).
    expect(named(w, "web/vite.config.ts").files).toEqual([]);
  });

  test("a TypeScript source's bare imports go where the nearest tsconfig.json sends them: it and what it names are kept", () => {
    const w = tree({
      ".mcp.json": JSON.stringify({ mcpServers: { t: { command: "bun", args: ["tools/ctx.ts"] } } }),
      "tools/ctx.ts": 'import lp from "left-pad";\nlp();\n',
      "tsconfig.json": JSON.stringify({
        extends: "./tsconfig.base.json",
        compilerOptions: { paths: { x: ["./lib/x.ts"] } },
      }),
      "tsconfig.base.json": "{}",
      "lib/x.ts": "",
      "web/tsconfig.json": "{}", // another folder's: not what decides for tools/
    });
    const files = named(w, ".mcp.json").files;
    expectNamed(
      files,
      ["tools/ctx.ts", "tsconfig.json", "tsconfig.base.json", "lib/x.ts", "tools/tsconfig.json"],
      true,
    );
    expectNamed(files, ["web/tsconfig.json"], false);
  });

  test("a wildcard paths alias a protected program imports through: the file it reaches, as bun resolves it", () => {
    const w = tree({
      ".mcp.json": JSON.stringify({ mcpServers: { t: { command: "bun", args: ["tools/srv.ts"] } } }),
      "tools/srv.ts": 'import z from "@/lib/z";\nimport u from "~u/util";\n',
      "tsconfig.json": JSON.stringify({
        compilerOptions: { baseUrl: ".", paths: { "@/*": ["./src/*"], "~u/*": ["shared/*"] } },
      }),
      "src/lib/z.ts": "",
      "shared/util/index.ts": "",
      "src/other.ts": "",
    });
    const files = named(w, ".mcp.json").files;
    expectNamed(files, ["tsconfig.json", "src/lib/z.ts", "shared/util/index.ts"], true);
    expectNamed(files, ["src/other.ts"], false);
  });

  test("tsconfig.json beside a jsconfig.json is watched (bun prefers it), and the run folder's counts too (tsx reads it)", () => {
    const w = tree({
      ".husky/pre-commit": "bun web/x.ts\nnpx tsx hooks/h.ts\n",
      "web/x.ts": 'import a from "a";\n',
      "web/jsconfig.json": "{}",
      "hooks/h.ts": 'import b from "b";\n',
      "hooks/tsconfig.json": "{}",
      "tsconfig.json": "{}",
    });
    const files = named(w, ".husky").files;
    expectNamed(files, ["web/jsconfig.json", "web/tsconfig.json", "hooks/tsconfig.json", "tsconfig.json"], true);
  });

  test("the plugins and presets a tool's configuration names as strings, as the tool completes them, when installed", () => {
    const w = tree({
      ".eslintrc.json": JSON.stringify({
        extends: ["plugin:react/recommended", "@acme", "airbnb"],
        plugins: ["jsx-a11y"],
        parser: "@typescript-eslint/parser",
        rules: { "no-console": "error" },
      }),
      ".babelrc": JSON.stringify({ presets: ["@babel/env"] }),
      "package.json": JSON.stringify({ name: "app", prettier: { plugins: ["prettier-plugin-tailwindcss"] } }),
      "node_modules/eslint-plugin-react/index.js": "",
      "node_modules/@acme/eslint-config/index.js": "",
      "node_modules/eslint-config-airbnb/index.js": "",
      "node_modules/eslint-plugin-jsx-a11y/index.js": "",
      "node_modules/@typescript-eslint/parser/index.js": "",
      "node_modules/@babel/preset-env/index.js": "",
      "node_modules/prettier-plugin-tailwindcss/index.js": "",
      "node_modules/eslint-plugin-vue/index.js": "", // installed, named by nothing
    });
    const eslint = named(w, ".eslintrc.json").files;
    expectNamed(
      eslint,
      [
        "node_modules/eslint-plugin-react",
        "node_modules/@acme/eslint-config",
        "node_modules/eslint-config-airbnb",
        "node_modules/eslint-plugin-jsx-a11y",
        "node_modules/@typescript-eslint/parser",
      ],
      true,
    );
    expect(eslint).not.toContain("node_modules/eslint-plugin-vue");
    expect(named(w, ".babelrc").files).toContain("node_modules/@babel/preset-env");
    expect(named(w, "package.json").files).toContain("node_modules/prettier-plugin-tailwindcss");
  });

  test("lint-staged's YAML and JS configs: each task's first word runs from .bin, however the task is written", () => {
    const w = tree({
      ".lintstagedrc.yaml": '"*.ts":\n  - eslint --fix\n  - "prettier -w"\n"*.md": mdlint # docs\n',
      ".lintstagedrc": "'*.css': stylelint --fix\n",
      // A JS config's function task: its template string's first word is the bin.
      "lint-staged.config.mjs": `export default {\n  "*.js": "jslint --fix",\n  "*.ts": (files) => \`tsc --noEmit $\{files.join(" ")}\`,\n};\n`,
    });
    expect(named(w, ".lintstagedrc.yaml").files).toEqual([
      "node_modules/.bin/eslint",
      "node_modules/.bin/mdlint",
      "node_modules/.bin/node",
      "node_modules/.bin/prettier",
      "node_modules/.bin/sh",
    ]);
    expect(named(w, ".lintstagedrc").files).toEqual([
      "node_modules/.bin/node",
      "node_modules/.bin/sh",
      "node_modules/.bin/stylelint",
    ]);
    expect(named(w, "lint-staged.config.mjs").files).toEqual([
      "node_modules/.bin/jslint",
      "node_modules/.bin/node",
      "node_modules/.bin/sh",
      "node_modules/.bin/tsc",
    ]);
  });

  test("package.json's hook keys run as a protected configuration: their bins, scripts and the scripts they call", () => {
    const w = tree({
      "package.json": JSON.stringify({
        name: "p",
        scripts: { lint: "tsc -p .", build: "node build.js" },
        "lint-staged": { "*.ts": ["eslint --fix"] },
        husky: { hooks: { "pre-commit": "sh scripts/check.sh", "pre-push": "npm run lint" } },
        dependencies: { "left-pad": "1" },
      }),
      "scripts/check.sh": "",
      "build.js": "",
    });
    const n = named(w, "package.json");
    expect(n.files).toEqual([
      ".npmrc",
      "node_modules/.bin/eslint",
      "node_modules/.bin/node",
      "node_modules/.bin/npm", // run by name with node_modules/.bin first on PATH: a planted one would run
      "node_modules/.bin/sh",
      "node_modules/.bin/tsc",
      "scripts/check.sh",
    ]);
    expect(n.scripts).toEqual(["lint", "prelint", "postlint"]);
  });

  test("the pre-commit package's key names npm scripts: each runs as npm run <name>", () => {
    const w = tree({
      "package.json": JSON.stringify({ scripts: { lint: "eslint .", test: "vitest" }, "pre-commit": ["lint"] }),
    });
    const n = named(w, "package.json");
    expect(n.scripts).toEqual(["lint", "prelint", "postlint"]);
    expect(n.files).toContain("node_modules/.bin/eslint");
    expect(n.files).not.toContain("node_modules/.bin/vitest");
  });

  test("a virtualenv whose python a config runs is named whole (its .pth files run at every start); a bare bin/ is not", () => {
    const w = tree({
      ".vscode/settings.json": JSON.stringify({ "python.defaultInterpreterPath": `${VAR}/.venv/bin/python` }),
      ".venv/pyvenv.cfg": "home = /usr/bin\n",
      ".venv/bin/python": "",
      ".venv/lib/python3.11/site-packages/site.pth": "",
      ".envrc": "PATH_add env2/bin\n",
      "env2/pyvenv.cfg": "home = /usr/bin\n",
      "env2/bin/python3": "",
      ".claude/settings.json": JSON.stringify({ hooks: { S: [{ hooks: [{ command: "tools/bin/run x" }] }] } }),
      "tools/bin/run": "",
    });
    chmodSync(join(w, "tools/bin/run"), 0o755);
    expect(named(w, ".vscode").files).toEqual([".venv", ".venv/bin/python"]);
    expect(named(w, ".envrc").files).toEqual(["env2", "env2/bin"]);
    expect(named(w, ".claude").files).toEqual(["tools/bin/run"]); // no pyvenv.cfg: no virtualenv
  });

  test("a script a hook runs when it appears and an import of a file not there yet are named absent; a bare name is not", () => {
    const w = tree({
      ".husky/pre-commit": "[ -f scripts/local.sh ] && sh scripts/local.sh\nsh fmt\n",
      "CLAUDE.md": "@docs/later.md\n",
    });
    expect(named(w, ".husky").files).toEqual([".husky/scripts/local.sh", "scripts/local.sh"]);
    expect(named(w, "CLAUDE.md").files).toEqual(["docs/later.md"]);
  });

  test("markdown: the front matter's commands and a memory file's @imports, never its prose", () => {
    const w = tree({
      "CLAUDE.md": "Read src/app.ts first.\n@docs/rules.md\n",
      "docs/rules.md": "@more.md\n", // relative to the file that imports it
      "docs/more.md": "",
      ".claude/agents/a.md": "---\nhooks: sh scripts/a.sh\n---\nEdit src/app.ts\n",
      "scripts/a.sh": "",
      "src/app.ts": "",
    });
    expect(named(w, "CLAUDE.md").files).toEqual(["docs/more.md", "docs/rules.md"]);
    expect(named(w, ".claude").files).toEqual(["scripts/a.sh"]);
  });

  test("a command's or a skill's body: the commands Claude Code runs as it loads it (!`cmd` and ```! blocks), never its prose", () => {
    const w = tree({
      ".claude/skills/ctx/SKILL.md":
        "---\nname: ctx\nallowed-tools: Bash(sh:*)\n---\nContext: !`sh scripts/ctx.sh`\nSee scripts/prose.sh, and `sh scripts/quoted.sh`.\n",
      ".claude/commands/deploy.md": "Run:\n```!\nbash tools/pre.sh\nnode tools/gen.js\n```\n",
      "scripts/ctx.sh": "",
      "scripts/prose.sh": "",
      "scripts/quoted.sh": "",
      "tools/pre.sh": "",
      "tools/gen.js": "",
    });
    expect(named(w, ".claude").files).toEqual(["scripts/ctx.sh", "tools/gen.js", "tools/pre.sh"]);
  });

  test("a program an interpreter runs by a bare name resolves as node does (`node mcpsrv` is mcpsrv.js), the places tried first watched", () => {
    const w = tree({
      ".mcp.json": '{"mcpServers":{"a":{"command":"node","args":["mcpbare"]},"b":{"command":"bun","args":["ctx"]}}}',
      "mcpbare.js": "",
      "ctx.ts": "",
      "notes.js": "",
    });
    expectNamed(named(w, ".mcp.json").files, ["mcpbare.js", "ctx.ts"], true);
    expectNamed(named(w, ".mcp.json").files, ["notes.js"], false);
  });

  test("the workdir as the program (`node .`, `python3 .`): its entry files and package.json's main, never the whole tree", () => {
    const w = tree({
      ".mcp.json": '{"mcpServers":{"a":{"command":"node","args":["."]},"b":{"command":"python3","args":["."]}}}',
      "package.json": '{"name":"p","main":"srv/main.js"}',
      "srv/main.js": "",
      "src/other.js": "",
    });
    const n = namedByToolConfig(join(w, ".mcp.json"), { workdir: w, ignored: () => false });
    const files = n.files.map((f) => f.slice(w.length + 1));
    expectNamed(files, ["srv/main.js", "index.js", "index.ts", "__main__.py"], true);
    expectNamed(files, ["src/other.js", "", "package.json"], false);
    expect(n.manifestKeys).toContainEqual({ pkg: join(w, "package.json"), key: "main" });
    expect(n.importRoots).toContain(w);
  });

  test("a path outside the tree that links into it (a home file stowed from a dotfiles checkout): what it lands on is named", () => {
    const w = tree({ ".claude/settings.json": "", "dotfiles/statusline.sh": "", "dotfiles/other.sh": "" });
    const home = realpathSync(tempDir("config-named-home"));
    mkdirSync(join(home, ".claude"));
    symlinkSync(join(w, "dotfiles/statusline.sh"), join(home, ".claude/statusline.sh"));
    writeFileSync(
      join(w, ".claude/settings.json"),
      '{"statusLine":{"type":"command","command":"bash ~/.claude/statusline.sh"}}',
    );
    const n = namedByToolConfig(join(w, ".claude"), { workdir: w, ignored: () => false, home });
    const files = n.files.map((f) => f.slice(w.length + 1));
    expectNamed(files, ["dotfiles/statusline.sh"], true);
    expectNamed(files, ["dotfiles/other.sh"], false);
  });

  test("a memory file's imports five hops deep, as Claude Code reads them, and .claude/rules' imports", () => {
    const w = tree({
      "CLAUDE.md": "@d/1.md\n",
      "d/1.md": "@2.md\n",
      "d/2.md": "@3.md\n",
      "d/3.md": "@4.md\n",
      "d/4.md": "@5.md\n",
      "d/5.md": "@6.md\n", // the sixth hop: Claude Code stops before it
      "d/6.md": "",
      ".claude/rules/style.md": "---\npaths: src/**\n---\nSee @../../docs/style.md\n",
      "docs/style.md": "",
    });
    expect(named(w, "CLAUDE.md").files).toEqual(["d/1.md", "d/2.md", "d/3.md", "d/4.md", "d/5.md"]);
    expect(named(w, ".claude").files).toEqual(["docs/style.md"]);
  });

  test("a module or program named without its extension resolves as node and bun load it; the places tried first are watched", () => {
    const w = tree({
      ".husky/pre-commit": "node scripts/check\nbun tools/run\nnode -r ./scripts/setup scripts/main.js\n",
      "scripts/check.js": 'require("./lib");\nrequire("./util");\n',
      "scripts/lib.js": "",
      "scripts/util/index.js": "",
      "scripts/setup.js": "",
      "scripts/main.js": 'import x from "./esm.js";\n',
      "scripts/esm.ts": "",
      "tools/run.ts": "",
    });
    const files = named(w, ".husky").files;
    expectNamed(
      files,
      [
        "scripts/check.js",
        "scripts/lib.js",
        "scripts/util/index.js",
        "scripts/setup.js",
        "scripts/esm.ts",
        "tools/run.ts",
      ],
      true,
    );
    // A new scripts/util.js would be loaded before the folder's index: watched.
    expectNamed(files, ["scripts/util.js", "scripts/lib.ts"], true);
  });

  test("bun's environment files, an env map of a JSON config, and a runner's own folder option", () => {
    const w = tree({
      ".husky/pre-commit": "bun scripts/check.ts\nuv run --directory srv python -m app\n",
      "scripts/check.ts": "",
      ".env": "A=1\n",
      "srv/app.py": "",
      ".mcp.json": JSON.stringify({
        mcpServers: {
          s: {
            command: "python3",
            args: ["-m", "myserver"],
            env: { PYTHONPATH: "src", NODE_OPTIONS: "--require ./tools/preload" },
          },
        },
      }),
      "src/myserver/__main__.py": "",
      "tools/preload.js": "",
    });
    expectNamed(named(w, ".husky").files, [".env", ".env.local", "srv/app.py"], true);
    const mcp = namedByToolConfig(join(w, ".mcp.json"), { workdir: w, ignored: () => false });
    const files = mcp.files.map((f) => f.slice(w.length + 1));
    expectNamed(files, ["src/myserver", "src/myserver/__main__.py", "tools/preload.js"], true);
    expect(mcp.importRoots.map((d) => d.slice(w.length + 1))).toContain("src");
  });

  test("the workspace a package manager runs a script in: its package.json's script is what runs", () => {
    const w = tree({
      ".husky/pre-commit": "npm run lint -w web\nnpm run check --workspace=api\npnpm --filter ./ui test\n",
      "package.json": JSON.stringify({ workspaces: ["web", "api", "ui"] }),
      "web/package.json": JSON.stringify({ scripts: { lint: "node lint.js" } }),
      "web/lint.js": "",
      "api/package.json": JSON.stringify({ scripts: { check: "node check.js" } }),
      "api/check.js": "",
      "ui/package.json": JSON.stringify({ scripts: { test: "node t.js" } }),
      "ui/t.js": "",
    });
    const n = namedByToolConfig(join(w, ".husky"), { workdir: w, ignored: () => false });
    expectNamed(
      n.files.map((f) => f.slice(w.length + 1)),
      ["web/lint.js", "api/check.js", "ui/t.js"],
      true,
    );
    const watched = n.npmScripts.map((x) => `${x.pkg.slice(w.length + 1)}#${x.name}`);
    for (const k of [
      "api/package.json#check",
      "ui/package.json#test",
      "web/package.json#lint",
      "web/package.json#prelint",
    ])
      expect(watched).toContain(k);
    // Every place a script may run from is watched for every name run there (the root too: the hook's own folder).
    expect(new Set(watched.map((k) => k.split("#")[0]))).toEqual(
      new Set(["package.json", "web/package.json", "api/package.json", "ui/package.json"]),
    );
  });

  test("what a hook runs after a cd is read from the folder it moved to", () => {
    const w = tree({
      ".husky/pre-commit":
        'cd tools && python3 gen.py\n(cd web; npm run lint)\npushd sub && make check\ncd "$(dirname "$0")"\n',
      "tools/gen.py": "import helper\n",
      "tools/helper.py": "",
      "web/package.json": JSON.stringify({ scripts: { lint: "node lint.js" } }),
      "web/lint.js": "",
      "sub/Makefile": "check:\n\t@sh c.sh\n",
      "sub/c.sh": "",
    });
    const n = namedByToolConfig(join(w, ".husky"), { workdir: w, ignored: () => false });
    const files = n.files.map((f) => f.slice(w.length + 1));
    expectNamed(files, ["tools/gen.py", "tools/helper.py", "web/lint.js", "sub/Makefile", "sub/c.sh"], true);
    expect(n.importRoots.map((d) => d.slice(w.length + 1))).toContain("tools");
  });

  test("a hook's scripts are followed to the end of their chain, however long (each file read once)", () => {
    const files: Record<string, string> = {
      ".claude/settings.json": '{"hooks":{"Stop":[{"command":"sh scripts/s0.sh"}]}}',
    };
    for (let i = 0; i < 8; i++) files[`scripts/s${i}.sh`] = `sh scripts/s${i + 1}.sh\nsh scripts/s0.sh\n`;
    files["scripts/s8.sh"] = "true\n";
    const w = tree(files);
    expect(named(w, ".claude").files).toEqual(Array.from({ length: 9 }, (_, i) => `scripts/s${i}.sh`));
  });

  test("a protected folder past the files dl reads is refused, not read in part: which file comes first is the disk's order", () => {
    const files: Record<string, string> = {
      ".claude/settings.json": '{"hooks":{"Stop":[{"command":"sh scripts/fmt.sh"}]}}',
    };
    for (let i = 0; i < 10_000; i++) files[`.claude/commands/c${i}.md`] = "";
    files["scripts/fmt.sh"] = "true\n";
    const w = tree(files);
    expect(() => named(w, ".claude")).toThrow(/holds more than 10000 files/);
  }, 60_000);

  test("a checkout inside a protected folder (Claude Code's .claude/worktrees) is not read as its configuration", () => {
    const files: Record<string, string> = {
      ".claude/settings.json": '{"hooks":{"Stop":[{"command":"sh scripts/fmt.sh"}]}}',
      ".claude/worktrees/feature/.git": "gitdir: ../../../.git/worktrees/feature\n",
      ".claude/worktrees/feature/run.sh": "sh scripts/other.sh\n",
      "scripts/fmt.sh": "",
      "scripts/other.sh": "",
    };
    for (let i = 0; i < 10_001; i++) files[`.claude/worktrees/feature/node_modules/p/f${i}.js`] = "";
    const w = tree(files);
    expect(named(w, ".claude").files).toEqual(["scripts/fmt.sh"]);
  }, 60_000);

  test("a folder an interpreter runs is named whole: .mcp.json's node ./srv and python3 -m pkg.serve", () => {
    const w = tree({
      ".mcp.json": JSON.stringify({
        mcpServers: {
          srv: { command: "node", args: ["./mcpsrv"] },
          py: { command: "python3", args: ["-m", "mcppy.serve"] },
        },
      }),
      "mcpsrv/package.json": '{"main":"server.js"}',
      "mcpsrv/server.js": "process.exit(0)\n",
      "mcppy/__init__.py": "",
      "mcppy/serve.py": "print(1)\n",
      "src/a.ts": "",
    });
    const got = named(w, ".mcp.json").files;
    // The folders themselves (kept whole, as a plugin folder is), and what their files name.
    expect(got).toEqual(["mcppy", "mcpsrv", "mcpsrv/server.js"]);
    expect(got).not.toContain("src/a.ts");
  });

  test("the word an interpreter runs counts whatever its name: bash statusline, sh -e keyhelper", () => {
    const w = tree({
      ".claude/settings.json": JSON.stringify({
        statusLine: { type: "command", command: "bash statusline" },
        apiKeyHelper: "sh -e keyhelper",
        hooks: { Stop: [{ hooks: [{ command: "echo notes" }] }] },
      }),
      statusline: "echo ok\n",
      keyhelper: "echo key\n",
      notes: "", // echo's argument: not a program
    });
    expect(named(w, ".claude").files).toEqual(["keyhelper", "statusline"]);
  });

  test("the package.json scripts a hook runs (npm run, npm test, pnpm x), and the files those run", () => {
    const w = tree({
      ".claude/settings.json": JSON.stringify({
        hooks: { Stop: [{ hooks: [{ command: "npm run --silent lint && pnpm fmt" }] }] },
      }),
      ".husky/pre-commit": "npm test\npnpm install\n",
      "package.json": JSON.stringify({
        scripts: { lint: "node tools/lint.js", fmt: "prettier -w .", test: "bun test" },
      }),
      "tools/lint.js": "",
    });
    const c = named(w, ".claude");
    expect(c.scripts).toEqual(["lint", "prelint", "postlint", "fmt", "prefmt", "postfmt"]);
    // npm's and pnpm's settings files, and the .bin entries the scripts' programs are looked up in.
    expect(c.files).toEqual([
      ".npmrc",
      ".pnpmfile.cjs",
      "node_modules/.bin/node",
      "node_modules/.bin/prettier",
      "node_modules/.bin/sh",
      "pnpm-workspace.yaml",
      "tools/lint.js",
    ]);
    // `pnpm install` runs the install's lifecycle scripts without naming them.
    expect(named(w, ".husky").scripts).toEqual([
      "test",
      "pretest",
      "posttest",
      ...["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"],
    ]);
  });

  test("a manager's own command runs lifecycle scripts it does not name; an option's value may be the script", () => {
    const w = tree({
      ".husky/pre-commit": "npm ci\nnpm install-test\nnpm restart\nnpm run --loglevel silent lint\n",
      "package.json": JSON.stringify({ scripts: { lint: "eslint ." } }),
    });
    const n = named(w, ".husky");
    for (const s of ["postinstall", "prepare", "test", "stop", "start", "lint", "prelint", "silent"])
      expect(n.scripts).toContain(s);
  });

  test("a script npm would run that is not there yet is watched too: npm's pre/post ones, and in a package.json a job could make", () => {
    const w = tree({
      ".husky/pre-commit": "npm run lint\ncd web/src && npm run check\n",
      "package.json": JSON.stringify({ scripts: { lint: "eslint ." } }),
      "web/src/a.js": "",
    });
    const n = namedByToolConfig(join(w, ".husky"), { workdir: w, ignored: () => false });
    const watched = n.npmScripts.map((x) => `${x.pkg.slice(w.length + 1)}#${x.name}`).sort();
    // npm walks up from web/src to the root's package.json: a job that makes one on the way is read first.
    // (Each name the hook runs counts in each place it runs a package manager.)
    expect(watched).toEqual(
      ["package.json", "web/package.json", "web/src/package.json"]
        .flatMap((p) => ["check", "lint", "postcheck", "postlint", "precheck", "prelint"].map((s) => `${p}#${s}`))
        .sort(),
    );
  });

  test("direnv: the folders its layouts put on PATH and the files an .envrc loads, absent ones too", () => {
    const w = tree({
      ".envrc":
        "layout node\nlayout_php\nlayout python3\nload_prefix ./pfx\nsource_env_if_exists .envrc.local\n" +
        "dotenv_if_exists\ndotenv conf\nsource_env scripts/env.sh\nuse nix\nuse flake ./dev#x\nuse vim\nuse vim .vim/local.vim\n",
      "conf/.env": "A=1\n",
      "scripts/env.sh": "export B=1\n",
    });
    expect(named(w, ".envrc").files).toEqual([
      ".direnv",
      ".env",
      ".envrc.local",
      ".vim/local.vim",
      ".vimrc.local",
      "conf/.env",
      "default.nix",
      "dev/flake.lock",
      "dev/flake.nix",
      "node_modules/.bin",
      "pfx/bin",
      "scripts/env.sh",
      "shell.nix",
      "vendor/bin",
    ]);
  });

  test("direnv: layout pipenv, poetry and uv take the project's .venv (pipenv's when it is there), layout anaconda a prefix given as a path", () => {
    expect(named(tree({ ".envrc": "layout uv\n" }), ".envrc").files).toEqual([".venv"]);
    // poetry's settings too, as the poetry it runs reads them (managerFiles).
    expect(named(tree({ ".envrc": "layout poetry\n" }), ".envrc").files).toEqual([".venv", "poetry.toml"]);
    // pipenv's own files too, as `pipenv --venv` runs (managerFiles: its Pipfile, .env and .venv).
    const pipenv = tree({ ".envrc": "layout pipenv\n", Pipfile: "[packages]\n" });
    expect(named(pipenv, ".envrc").files).toEqual([".env", ".venv", "Pipfile"]);
    expect(named(tree({ ".envrc": "layout_pipenv\n" }), ".envrc").files).toEqual([".venv"]);
    const w = tree({ ".envrc": "layout anaconda ./env\nlayout anaconda base\n" });
    expect(named(w, ".envrc").files).toEqual([".direnv", "env"]);
  });

  test("NODE_PATH that a command or an MCP server's env map sets: a bare require found there is named, found nowhere its places are", () => {
    const mcp = {
      mcpServers: {
        np: { command: "node", args: ["tools/np.js"], env: { NODE_PATH: "." } },
        lib: { command: "sh", args: ["-c", "NODE_PATH=lib:vendor node tools/lib.js"] },
      },
    };
    const w = tree({
      ".mcp.json": JSON.stringify(mcp),
      "tools/np.js": 'require("src/store");\nrequire("fs");\n',
      "tools/lib.js": 'const h = require("helpers/x");\nimport("later")\n',
      "src/store.js": "module.exports = 1\n",
      "lib/helpers/x/index.js": "module.exports = 2\n",
    });
    const files = named(w, ".mcp.json").files;
    // Found: the file node loads, and the places it tries first (a job that makes one is loaded instead).
    expect(files).toContain("src/store.js");
    expect(files).toContain("src/store.ts");
    expect(files).toContain("lib/helpers/x/index.js");
    expect(files).toContain("lib/helpers/x/package.json");
    // Found nowhere: each place it would be, in each NODE_PATH folder of the walk.
    expect(files).toContain("vendor/later.js");
    expect(files).toContain("later.js");
    // Node's own modules are no file of the tree.
    expect(files.filter((f) => /(^|\/)fs(\.|$)/.test(f))).toEqual([]);
  });

  test("a build runner pointed at another folder or given another file: that folder's Makefile, the file it is given", () => {
    const command = "make -C tools check && make -f build.mk lint && just --justfile ci.just";
    const w = tree({
      ".claude/settings.json": JSON.stringify({ hooks: { Stop: [{ hooks: [{ command }] }] } }),
      "tools/Makefile": "check:\n\t@true\n",
      "build.mk": "lint:\n\t@true\n",
      "ci.just": "default:\n",
      // Not named: a folder no word names, a file of no runner's kind.
      "docs/Makefile": "x:\n",
      "check.txt": "make\n",
    });
    expect(named(w, ".claude").files.filter((f) => existsSync(join(w, f)))).toEqual([
      "build.mk",
      "ci.just",
      "tools/Makefile",
    ]);
  });

  test("task runners and Python project managers a hook runs: their task files, the virtualenvs tox and nox reuse, the interpreter pdm is given", () => {
    const command =
      "npx gulp lint && grunt --gruntfile build/Gruntfile.js && tox -e lint && nox -s fmt && hatch run lint && pdm run check && pixi run test";
    const w = tree({
      ".husky/pre-commit": `${command}\n`,
      "gulpfile.js": "exports.lint = () => {}\n",
      "build/Gruntfile.js": "module.exports = () => {}\n",
      "tox.ini": "[testenv:lint]\ncommands = true\n",
      ".tox/lint/bin/python": "",
      "noxfile.py": "import nox\n",
      ".nox/fmt/bin/python": "",
      "pyproject.toml": '[tool.hatch.envs.default.scripts]\nlint = "true"\n',
      ".pdm-python": "/usr/bin/python3\n",
      "pixi.toml": '[tasks]\ntest = "true"\n',
    });
    const files = named(w, ".husky").files;
    for (const f of ["gulpfile.js", "build/Gruntfile.js", "tox.ini", ".tox", "noxfile.py", ".nox"])
      expect({ f, named: files.includes(f) }).toEqual({ f, named: true });
    for (const f of ["pyproject.toml", ".pdm-python", "pixi.toml", "hatch.toml", "gulpfile.ts"])
      expect({ f, named: files.includes(f) }).toEqual({ f, named: true });
  });

  test("words that are Object.prototype's names are no runner, manager or layout (a table lookup by any word of a command)", () => {
    const words = "constructor toString valueOf __proto__ hasOwnProperty";
    const w = tree({
      ".husky/pre-commit": `${words}\nnpx constructor && toString run x && layout toString\n`,
      ".envrc": "layout constructor\nlayout_valueOf\n",
    });
    expect(named(w, ".husky").files).toEqual(expect.any(Array));
    expect(named(w, ".envrc").files).toEqual([".direnv"]);
  });

  test("Python project managers a hook runs: the virtualenv each runs (.venv, pixi's .pixi) and poetry's settings, absent ones too", () => {
    for (const command of ["poetry run pytest", "uv run ruff check .", "pdm run lint"]) {
      const w = tree({ ".husky/pre-commit": `${command}\n` });
      expect({ command, venv: named(w, ".husky").files.includes(".venv") }).toEqual({ command, venv: true });
    }
    const w = tree({ ".husky/pre-commit": "poetry run x && pixi run test\n" });
    expect(named(w, ".husky").files).toEqual(expect.arrayContaining([".pixi", ".venv", "poetry.toml"]));
  });

  test("the environment files just's set dotenv-load and Task's dotenv: load into every recipe and task, absent ones too", () => {
    const w = tree({
      ".husky/pre-commit": "just lint && task check && just --justfile ci/ci.just x && task -d sub check\n",
      justfile: "set dotenv-load\nlint:\n  true\n",
      "ci/ci.just": "set dotenv-filename := 'ci.env'\nx:\n  true\n",
      "Taskfile.yml":
        "version: '3'\ndotenv: ['.env.task', \"conf/task.env\", '{{.HOME}}/.env']\ntasks:\n  check:\n    cmds: [true]\n",
      "sub/Taskfile.yml": "version: '3'\ndotenv:\n  - local.env\n  - 'more.env'\n",
    });
    const files = named(w, ".husky").files;
    for (const f of [".env", "ci/ci.env", ".env.task", "conf/task.env", "sub/local.env", "sub/more.env"])
      expect({ f, named: files.includes(f) }).toEqual({ f, named: true });
    // A templated path is not guessed at.
    expect(files.filter((f) => f.includes("{{"))).toEqual([]);
  });

  test("a hook linked to its script through a long chain of links: the script at its end, as far as the kernel follows", () => {
    const w = tree({ "scripts/pre-commit": "#!/bin/sh\n", ".githooks/README": "hooks\n" });
    mkdirSync(join(w, "links"));
    const hops = 12;
    symlinkSync("../scripts/pre-commit", join(w, "links", `l${hops}`));
    for (let i = hops - 1; i >= 1; i--) symlinkSync(`l${i + 1}`, join(w, "links", `l${i}`));
    symlinkSync("../links/l1", join(w, ".githooks/pre-commit"));
    expect(named(w, ".githooks").files).toContain("scripts/pre-commit");
  });
});
