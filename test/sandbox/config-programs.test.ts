import { describe, expect, test } from "bun:test";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { refusedContent, refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { binsRun, pathDirs } from "../../src/sandbox/config-programs.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { HOST_ENV, noMoves, tree as treeOf } from "./file-tree.ts";

/** What the write tools protect with: no writable paths, the environment of dl's own git questions. */
const PROTECT = { writable: [], gitEnv: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } };

/**
 * The programs a protected configuration runs by name (config-programs.ts): every common
 * way of putting a folder on PATH (direnv, a shell assignment, VS Code, mise), the config's
 * own folder however it is spelt, `yarn <bin>`; and the workdir itself on PATH, which is
 * watched for new files instead of being bound read-only whole.
 */

const ENV = HOST_ENV;
const dirs = (text: string) => pathDirs(text).map((d) => d.dir);

const tree = (files: Record<string, string>) => treeOf(files, "config-programs");

describe("pathDirs", () => {
  test("direnv: quoted, several arguments, $PWD / $(pwd) / PWD in braces, path_add PATH", () => {
    expect(dirs('PATH_add "bin"\n')).toEqual(["bin"]);
    expect(dirs('PATH_add "$PWD/bin"\n')).toEqual(["./bin"]);
    expect(dirs("PATH_add $(pwd)/bin\n")).toEqual(["./bin"]);
    expect(dirs("PATH_add tools bin # two\n")).toEqual(["tools", "bin"]);
    expect(dirs("path_add PATH a 'b'\n")).toEqual(["a", "b"]);
    expect(dirs("path_add MANPATH man\n")).toEqual([]);
    expect(dirs(`PATH_add "$\{PWD}"/x\nPATH_add .\n`)).toEqual(["./x", "."]);
  });

  test('assignments: PATH=$(pwd)/bin:$PATH, export PATH="$PWD/bin:$PATH", PATH=.:$PATH', () => {
    expect(dirs("PATH=$(pwd)/bin:$PATH\n")).toEqual(["./bin"]);
    expect(dirs('export PATH="$PWD/bin:$PATH"\n')).toEqual(["./bin"]);
    expect(dirs("PATH=.:$PATH\n")).toEqual(["."]);
    expect(dirs("PYTHONPATH=src\nMYPATH=lib\n")).toEqual([]);
  });

  test("mise: [env] _.path as a string or an array, {{config_root}}", () => {
    expect(dirs('[env]\n_.path = ["./bin", "{{config_root}}/tools"]\n')).toEqual(["./bin", "./tools"]);
    expect(dirs("[env]\n_.path = '{{ config_root }}/bin'\n")).toEqual(["./bin"]);
    expect(pathDirs('_.path = "./bin"\n')[0]?.line).toBe('_.path = "./bin"');
  });

  test("mise and asdf: a path: version (.tool-versions, [tools]) puts that folder's bin first on PATH", () => {
    expect(dirs("node path:./tools/node # ours\nshfmt 3.7.0\n")).toEqual(["./tools/node"]);
    expect(dirs('[tools]\nnode = "path:vendor/node"\ngo = ["1.22", "path:{{config_root}}/go"]\n')).toEqual([
      "vendor/node",
      "./go",
    ]);
    expect(dirs("# see mypath:x\nurl = 'http://a/path:b'\n")).toEqual([]);
  });
});

describe("binsRun", () => {
  test("yarn <bin> and yarn run <bin>, as well as yarn exec", () => {
    expect(binsRun("yarn lint-fix --fix", false)).toEqual(["lint-fix"]);
    expect(binsRun("yarn run fmt && yarn exec tsc", false)).toEqual(["fmt", "tsc"]);
  });
});

async function repo(files: Record<string, string>): Promise<string> {
  const w = tree(files);
  await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
  return w;
}

const nothingMoved = noMoves;

describe("the workdir itself on PATH", () => {
  test("PATH_add . in the workdir's .envrc: a new ./git fails the job and is moved out; existing files stay writable", async () => {
    const w = await repo({ ".envrc": "PATH_add .\n", "tool.sh": "old\n" });
    const out = realpathSync(tempDir("config-programs-q"));
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => out });
    expect(guard.keptReadOnly).not.toContain("");
    writeFileSync(join(w, "tool.sh"), "new\n");
    mkdirSync(join(w, "src"));
    writeFileSync(join(w, "src/a.ts"), "x");
    writeFileSync(join(w, "git"), "#!/bin/sh\n");
    const verdict = await guard.finish();
    expect(verdict.tamper?.failureKind).toBe("jail_git_tampered");
    expect(verdict.tamper?.changed).toEqual(["git (new)"]);
    expect(existsSync(join(w, "git"))).toBe(false);
    expect(existsSync(join(out, "git"))).toBe(true);
    expect(existsSync(join(w, "src/a.ts"))).toBe(true);
  });

  test("PATH_add pkg in the parent repo's .envrc, workdir pkg: not bound read-only, new files watched", async () => {
    const top = await repo({ ".envrc": "PATH_add pkg\n", "pkg/a.ts": "x" });
    const w = join(top, "pkg");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    expect(guard.protectedPaths.map((p) => p.path)).not.toContain(w);
    writeFileSync(join(w, "a.ts"), "y");
    expect((await guard.finish()).tamper).toBeNull();
  });

  test("the write tools refuse a new file directly in it, naming the rule and the line; an existing one is writable", async () => {
    const p = { writable: [], gitEnv: ENV };
    const w = await repo({ ".envrc": "export PATH=$PWD:$PATH\n", "tool.sh": "" });
    const refusal = await refusedWrite(w, join(w, "git"), p);
    expect(refusal).toContain("rule config-named");
    expect(refusal).toContain("export PATH=$PWD:$PATH");
    expect(await refusedWrite(w, join(w, "tool.sh"), p)).toBeNull();
    expect(await refusedWrite(w, join(w, "src/new.ts"), p)).toBeNull();
    const top = await repo({ ".envrc": "PATH_add pkg\n", "pkg/a.ts": "" });
    expect(await refusedWrite(join(top, "pkg"), join(top, "pkg/a.ts"), p)).toBeNull();
    expect(await refusedWrite(join(top, "pkg"), join(top, "pkg/ls"), p)).toContain("rule config-named");
  });
});

describe("configs above the workdir count from the caller's project folder", () => {
  test("a non-repository project's hook `bash sub/fmt.sh`, workdir sub: read-only in the jail and to the write tools", async () => {
    const proj = tree({
      ".claude/settings.json": JSON.stringify({ hooks: { S: [{ hooks: [{ command: "bash sub/fmt.sh" }] }] } }),
      "sub/fmt.sh": "true\n",
      "sub/a.ts": "",
    });
    const w = join(proj, "sub");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, project: proj, quarantine: nothingMoved });
    expect(guard.keptReadOnly).toContain("fmt.sh");
    await guard.finish();
    const p = { writable: [], gitEnv: ENV, project: proj };
    expect(await refusedWrite(w, join(w, "fmt.sh"), p)).toContain("rule config-named");
    expect(await refusedWrite(w, join(w, "a.ts"), p)).toBeNull();
    // A caller folder that does not hold the workdir counts for nothing.
    const elsewhere = { ...p, project: realpathSync(tempDir("config-programs-other")) };
    expect(await refusedWrite(w, join(w, "fmt.sh"), elsewhere)).toBeNull();
  });
});

describe("package.json's hook keys are configuration the hook manager runs", () => {
  const pkg = JSON.stringify({
    "lint-staged": { "*.ts": "eslint --fix" },
    husky: { hooks: { "pre-commit": "sh scripts/check.sh" } },
  });

  test("in the workdir: the script a hook key runs is kept read-only, package.json itself is not", async () => {
    const w = tree({ "package.json": pkg, "scripts/check.sh": "true\n", "src/a.ts": "" });
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    expect(guard.keptReadOnly).toContain("scripts/check.sh");
    expect(guard.keptReadOnly).not.toContain("package.json"); // delegates still add dependencies
    expect(guard.keptReadOnly).not.toContain("src/a.ts");
    await guard.finish();
  });

  test("other tools' keys: changed, added or in a new package.json, put back; npm's own fields stay the job's", async () => {
    const before = {
      name: "app",
      dependencies: { a: "1" },
      prettier: "./cfg/p.cjs",
      jest: { testEnvironment: "node" },
    };
    const w = tree({ "package.json": JSON.stringify(before), "cfg/p.cjs": "module.exports = {};\n", "sub/a.md": "" });
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    expect(guard.keptReadOnly).toContain("cfg/p.cjs"); // the module the tool's key names
    // The job: a dependency, a new name, and three tools' keys; a new package.json with one too.
    const job = { ...before, name: "app2", dependencies: { a: "1", b: "2" }, prettier: "./evil.cjs", stylelint: {} };
    writeFileSync(join(w, "package.json"), JSON.stringify(job));
    writeFileSync(join(w, "sub/package.json"), JSON.stringify({ name: "sub", prettier: "./x.cjs" }));
    const verdict = await guard.finish();
    expect(verdict.tamper?.changed).toEqual([
      "package.json#prettier (restored)",
      "package.json#stylelint (restored)",
      "sub/package.json#prettier (restored)",
    ]);
    const now = JSON.parse(readFileSync(join(w, "package.json"), "utf8"));
    expect(now).toEqual({ ...before, name: "app2", dependencies: { a: "1", b: "2" } });
    expect(JSON.parse(readFileSync(join(w, "sub/package.json"), "utf8"))).toEqual({ name: "sub" });
  });

  test("the scripts a hook runs, there or not yet: a prelint added, a lint in a package.json the job made on the hook's way, put back", async () => {
    const w = tree({
      ".husky/pre-commit": "npm run lint\ncd web && npm run lint\n",
      "package.json": JSON.stringify({ name: "app", scripts: { lint: "eslint ." } }),
      "web/a.js": "",
    });
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    writeFileSync(
      join(w, "package.json"),
      JSON.stringify({ name: "app", scripts: { lint: "eslint .", prelint: "sh x" } }),
    );
    writeFileSync(join(w, "web/package.json"), JSON.stringify({ name: "web", scripts: { lint: "sh x", dev: "vite" } }));
    const verdict = await guard.finish();
    expect(verdict.tamper?.changed).toEqual([
      "package.json#scripts.prelint (restored)",
      "web/package.json#scripts.lint (restored)",
    ]);
    expect(JSON.parse(readFileSync(join(w, "web/package.json"), "utf8"))).toEqual({
      name: "web",
      scripts: { dev: "vite" },
    });
  });

  test("a package.json dl cannot read keys from is put back whole; nothing is written through a link", async () => {
    const original = JSON.stringify({ name: "app", prettier: "./p.cjs" });
    const w = tree({
      "package.json": original,
      "sub/package.json": original,
      "big/package.json": original,
      "bom/package.json": original,
    });
    const outside = tree({ "settings.json": JSON.stringify({ hooks: { x: 1 }, permissions: {} }) });
    const theirs = readFileSync(join(outside, "settings.json"), "utf8");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    // The job: package.json a link to a file of the user's; sub/ a link to the user's folder; a BOM; a file past 4 MiB.
    rmSync(join(w, "package.json"));
    symlinkSync(join(outside, "settings.json"), join(w, "package.json"));
    rmSync(join(w, "sub"), { recursive: true });
    symlinkSync(outside, join(w, "sub"));
    writeFileSync(join(outside, "package.json"), JSON.stringify({ name: "x", prettier: "./evil.cjs" }));
    const big = { name: "app", prettier: "./evil.cjs", description: "x".repeat(5 << 20) };
    writeFileSync(join(w, "big/package.json"), JSON.stringify(big));
    writeFileSync(
      join(w, "bom/package.json"),
      `\uFEFF${JSON.stringify({ name: "b", jest: { setupFiles: ["./e.js"] } })}`,
    );
    const v = await guard.finish();
    expect(v.tamper?.changed).toContain("package.json#whole file (restored)");
    expect(v.tamper?.changed).toContain("big/package.json#whole file (restored)");
    expect(v.tamper?.changed).toContain("bom/package.json#jest (restored)");
    expect(v.tamper?.changed.some((c) => c.startsWith("sub/package.json (") && c.includes("link"))).toBe(true);
    expect(readFileSync(join(outside, "settings.json"), "utf8")).toBe(theirs); // never written through the link
    expect(JSON.parse(readFileSync(join(outside, "package.json"), "utf8")).prettier).toBe("./evil.cjs");
    expect(lstatSync(join(w, "package.json")).isFile()).toBe(true);
    expect(readFileSync(join(w, "package.json"), "utf8")).toBe(original);
    expect(readFileSync(join(w, "big/package.json"), "utf8")).toBe(original);
  });

  test("a protected file's #imports: the files they map to are read-only, the map is put back, a nearer package.json is watched", async () => {
    const pkg = { name: "app", imports: { "#lint/*": { node: "./tools/lint/*.js", default: "./tools/lint/*.mjs" } } };
    const w = tree({
      "package.json": JSON.stringify(pkg),
      // The write tools look at the configs beside a package.json; the jail at every one.
      "eslint.config.js": 'import rules from "#lint/rules";\nexport default [rules];\n',
      "web/eslint.config.js": 'import rules from "#lint/rules";\nexport default [rules];\n',
      "tools/lint/rules.js": "export default {};\n",
      "tools/lint/other.js": "",
    });
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => join(w, "..", "q-imports") });
    expect(guard.keptReadOnly).toContain("tools/lint/rules.js");
    expect(guard.keptReadOnly).not.toContain("tools/lint/other.js");
    const abs = join(w, "package.json");
    const moved = JSON.stringify({ ...pkg, imports: { "#lint/*": "./evil/*.js" } });
    expect(await refusedContent(w, abs, moved, PROTECT)).toContain("imports");
    expect(await refusedContent(w, abs, JSON.stringify({ ...pkg, version: "2.0.0" }), PROTECT)).toBeNull();
    writeFileSync(abs, moved);
    writeFileSync(join(w, "web/package.json"), JSON.stringify({ name: "web", imports: { "#lint/*": "./x/*.js" } }));
    const v = await guard.finish();
    expect(v.tamper?.changed).toContain("package.json#imports (restored)");
    expect(v.tamper?.changed).toContain("web/package.json (new)");
    expect(JSON.parse(readFileSync(abs, "utf8"))).toEqual(pkg);
  });

  test("the write tools refuse a change to another tool's key, not to npm's own fields", async () => {
    const w = tree({ "package.json": JSON.stringify({ name: "app", eslintConfig: { root: true } }) });
    const abs = join(w, "package.json");
    const text = (o: object) => JSON.stringify({ name: "app", eslintConfig: { root: true }, ...o });
    expect(await refusedContent(w, abs, text({ prettier: "./p.cjs" }), PROTECT)).toContain("rule tool-config");
    expect(await refusedContent(w, abs, text({ eslintConfig: { extends: "./evil.js" } }), PROTECT)).toContain(
      "eslintConfig",
    );
    expect(
      await refusedContent(w, abs, text({ dependencies: { a: "1" }, version: "2.0.0", exports: "./i.js" }), PROTECT),
    ).toBeNull();
    expect(
      await refusedContent(w, join(w, "new/package.json"), JSON.stringify({ name: "n", jest: {} }), PROTECT),
    ).toContain("jest");
  });

  test("from the project above a subfolder workdir: its hook keys' scripts there are read-only too", async () => {
    const proj = tree({ "package.json": pkg, "scripts/check.sh": "true\n", "scripts/other.sh": "" });
    const w = join(proj, "scripts");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, project: proj, quarantine: nothingMoved });
    expect(guard.keptReadOnly).toContain("check.sh");
    expect(guard.keptReadOnly).not.toContain("other.sh");
    await guard.finish();
    const p = { writable: [], gitEnv: ENV, project: proj };
    expect(await refusedWrite(w, join(w, "check.sh"), p)).toContain("rule config-named");
    expect(await refusedWrite(w, join(w, "other.sh"), p)).toBeNull();
  });
});
