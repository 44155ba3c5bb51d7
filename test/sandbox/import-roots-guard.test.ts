import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { refusedContent, refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { HOST_ENV, tree as treeOf } from "./file-tree.ts";

/**
 * The guards over what a protected program loads on its own (python-imports.ts and the
 * configs it reads), end to end through the tree guard and the write tools: a new module
 * where a protected Python command imports from first, the module a protected script
 * imports beside it, a forged compiled module, and the caps that refuse instead of reading
 * in part.
 */

const ENV = HOST_ENV;
const p = { writable: [], gitEnv: ENV };

/** A repository whose .mcp.json runs `python3 tools/ctx.py` and whose pre-commit hook runs `python3 -m pytest`. */
async function pythonProject(): Promise<string> {
  const w = treeOf(
    {
      ".mcp.json": JSON.stringify({ mcpServers: { py: { command: "python3", args: ["tools/ctx.py"] } } }),
      "tools/ctx.py": "import json\nimport helper\n",
      "tools/helper.py": "X = 1\n",
      "src/app.py": "",
      "tests/test_ok.py": "def test_ok():\n    assert True\n",
      "tools/gettext/README.md": "notes\n",
    },
    "import-roots",
  );
  await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
  writeFileSync(join(w, ".git/hooks/pre-commit"), "#!/bin/sh\npython3 -m pytest -q\n");
  chmodSync(join(w, ".git/hooks/pre-commit"), 0o755);
  return w;
}

describe("where a protected Python command imports from first", () => {
  test("after a job: its new modules, packages and distributions are moved out and named; other new files stay", async () => {
    const w = await pythonProject();
    const out = realpathSync(tempDir("import-roots-q"));
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => out });
    expect(guard.keptReadOnly).toContain("tools/helper.py");
    writeFileSync(join(w, "tools/json.py"), "x = 1\n");
    writeFileSync(join(w, "re.py"), "x = 1\n");
    writeFileSync(join(w, "main.py"), "x = 1\n"); // the project's own name: nothing imports it in place of another
    mkdirSync(join(w, "migrations"));
    writeFileSync(join(w, "migrations/0001_initial.py"), "x = 1\n");
    writeFileSync(join(w, "tools/gettext/__init__.py"), "x = 1\n"); // a folder the user had: now a package
    mkdirSync(join(w, "zz-1.0.dist-info"));
    writeFileSync(join(w, "zz-1.0.dist-info/entry_points.txt"), "[pytest11]\nzz = zz\n");
    mkdirSync(join(w, "notes"));
    writeFileSync(join(w, "notes/todo.txt"), "later\n");
    writeFileSync(join(w, "src/new.py"), "y = 2\n");
    const verdict = await guard.finish();
    expect(verdict.tamper?.changed.sort()).toEqual([
      "re.py (new)",
      "tools/gettext/__init__.py (new)",
      "tools/json.py (new)",
      "zz-1.0.dist-info (new)",
      "zz-1.0.dist-info/entry_points.txt (written)",
    ]);
    for (const f of ["tools/json.py", "re.py", "zz-1.0.dist-info"]) expect(existsSync(join(w, f))).toBe(false);
    for (const f of ["notes/todo.txt", "src/new.py", "main.py", "migrations/0001_initial.py"])
      expect(existsSync(join(w, f))).toBe(true);
  });

  test("a compiled module the job made or changed is removed, not judged: the host compiles it again from its source", async () => {
    const w = await pythonProject();
    mkdirSync(join(w, "tests/__pycache__"));
    writeFileSync(join(w, "tests/__pycache__/kept.cpython-311.pyc"), "host's own");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => tempDir("unused-q") });
    writeFileSync(join(w, "tests/__pycache__/test_ok.cpython-311-pytest-7.2.1.pyc"), "forged");
    const verdict = await guard.finish();
    expect(verdict.tamper).toBeNull();
    expect(existsSync(join(w, "tests/__pycache__/test_ok.cpython-311-pytest-7.2.1.pyc"))).toBe(false);
    expect(existsSync(join(w, "tests/__pycache__/kept.cpython-311.pyc"))).toBe(true);
  });

  test("the write tools refuse a new module there and the module a protected script imports; other writes go ahead", async () => {
    const w = await pythonProject();
    for (const f of [
      "tools/json.py",
      "re.py",
      "email/__init__.py",
      "x-1.0.dist-info/entry_points.txt",
      "tools/gettext/__init__.py",
    ])
      expect({ f, refused: await refusedWrite(w, join(w, f), p) }).toEqual({
        f,
        refused: expect.stringContaining("new Python module"),
      });
    expect(await refusedWrite(w, join(w, "tools/helper.py"), p)).toContain("rule config-named");
    for (const f of [
      "src/new.py",
      "src/app.py",
      "notes.txt",
      "tests/test_more.py",
      "main.py",
      "newpkg/__init__.py",
      "x-1.0.dist-info/METADATA", // pip install -e . writes the project's own metadata
      "test/test_views.py", // a folder without __init__.py loses to the standard library's test package
    ])
      expect({ f, refused: await refusedWrite(w, join(w, f), p) }).toEqual({ f, refused: null });
  });
});

describe("a git hook's npm run", () => {
  test("the package.json script a plain .git/hooks/pre-commit runs is put back after a job and refused by the write tools", async () => {
    const w = treeOf(
      { "package.json": JSON.stringify({ scripts: { lint: "node lint.js" } }), "lint.js": "" },
      "hook-npm",
    );
    await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
    writeFileSync(join(w, ".git/hooks/pre-commit"), "#!/bin/sh\nnpm run lint\n");
    chmodSync(join(w, ".git/hooks/pre-commit"), 0o755);
    const evil = JSON.stringify({ scripts: { lint: "sh evil.sh" } });
    expect(await refusedContent(w, join(w, "package.json"), evil, p)).toContain("scripts.lint");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => tempDir("unused-q") });
    writeFileSync(join(w, "package.json"), evil);
    expect((await guard.finish()).tamper?.changed).toEqual(["package.json#scripts.lint (restored)"]);
    expect(readFileSync(join(w, "package.json"), "utf8")).toContain("node lint.js");
  });
});

describe("DELEGATE_WRITABLE_TOOL_CONFIG", () => {
  test("it unlocks a path a protected configuration names (bun's .env), for the write tools and the jail alike", async () => {
    const w = treeOf({ ".husky/pre-commit": "bun test\n", "src/a.ts": "" }, "writable-named");
    await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
    expect(await refusedWrite(w, join(w, ".env"), p)).toContain("DELEGATE_WRITABLE_TOOL_CONFIG");
    expect(await refusedWrite(w, join(w, ".env"), { ...p, writable: [".env"] })).toBeNull();
    const guard = await prepareTreeGuard(w, {
      home: ENV.HOME,
      env: ENV,
      quarantine: () => tempDir("unused-q"),
      writable: [".env"],
    });
    writeFileSync(join(w, ".env"), "A=1\n");
    expect((await guard.finish()).tamper).toBeNull();
    expect(existsSync(join(w, ".env"))).toBe(true);
  });
});

describe("caps that refuse instead of reading in part", () => {
  test("more nested repositories than dl asks git about: the job is refused, none left unasked", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i <= 200; i++) files[`vendor/r${i}/.git`] = "gitdir: ../../nowhere\n";
    const w = treeOf(files, "many-repos");
    await expect(prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: () => w })).rejects.toThrow(
      /201 git entries/,
    );
  });
});
