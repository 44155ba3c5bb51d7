import { describe, expect, test } from "bun:test";
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { refusedContent } from "../../src/agent/tools/protect-write.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { hasToolsPart, toolsPart } from "../../src/sandbox/manifest-sections.ts";
import { HOST_ENV, tree as treeOf } from "./file-tree.ts";

/** What the write tools protect with: no writable paths, the environment of dl's own git questions. */
const PROTECT = { writable: [], gitEnv: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } };

/**
 * pyproject.toml and setup.cfg: the project's own tables are the delegate's, every other
 * tool's part (pylint's init-hook, pytest's addopts, mypy's plugins) is kept: put back
 * whole after a jailed job, refused by the write tools, a new manifest with one moved out.
 */

const tree = (files: Record<string, string>) => treeOf(files, "manifest-sections");
const ENV = HOST_ENV;
const quarantine = (w: string) => () => join(w, "..", "q");

const PYPROJECT = `[project]
name = "app"
dependencies = ["requests"]

[project.optional-dependencies]
dev = ["pytest"]

[tool.pytest.ini_options]
testpaths = ["tests"]
`;

describe("the tools' part of a manifest", () => {
  test("everything outside the project's own tables, the lines before the first header too", () => {
    expect(toolsPart("pyproject.toml", PYPROJECT)).toBe('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n');
    const deps = PYPROJECT.replace('["requests"]', '["requests", "rich"]').replace('["pytest"]', '["pytest", "ruff"]');
    expect(toolsPart("pyproject.toml", deps)).toBe(toolsPart("pyproject.toml", PYPROJECT));
    // A root-level dotted key is a tool's table too.
    expect(toolsPart("pyproject.toml", `tool.pylint.main.init-hook = "x"\n${PYPROJECT}`)).toContain("init-hook");
  });

  test("no header a reader sees can hide inside the project's region; an indented one opens none", () => {
    // Any line starting with `[` ends the project's region, indented or inside a string.
    const hidden = '[project]\nname = "a"\n  [tool.pylint.main]\ninit-hook = "import os"\n';
    expect(toolsPart("pyproject.toml", hidden)).toContain("init-hook");
    const indentedOwn = '[tool.x]\na = 1\n  [project]\ninit-hook = "import os"\n';
    expect(toolsPart("pyproject.toml", indentedOwn)).toContain("init-hook");
  });

  test("a line break only Python knows (a lone \\r, \\f, \\x1c) followed by a header closes the project's region", () => {
    for (const brk of ["\r", "\f", "\x1c", "\u2028"]) {
      const cfg = `[metadata]\nname = x${brk}[tool:pytest]${brk}addopts = -p evil\n`;
      expect({ brk, part: toolsPart("setup.cfg", cfg) }).toEqual({
        brk,
        part: `name = x${brk}[tool:pytest]${brk}addopts = -p evil\n`,
      });
    }
    // Nor does a control character before the header make it the project's.
    expect(hasToolsPart("setup.cfg", "[metadata]\nname = x\n\x1c[mypy]\nplugins = ./p.py\n")).toBe(true);
    // CRLF files still open the project's region.
    expect(hasToolsPart("pyproject.toml", '[project]\r\nname = "a"\r\n')).toBe(false);
  });

  test("Poetry's, uv's and PDM's dependency tables are the project's; Poetry's plugins are not", () => {
    const poetry =
      '[tool.poetry.dependencies]\npython = "^3.12"\n[tool.poetry.group.dev.dependencies]\nruff = "*"\n[tool.uv.sources]\nx = { path = "../x" }\n';
    expect(hasToolsPart("pyproject.toml", poetry)).toBe(false);
    expect(hasToolsPart("pyproject.toml", '[tool.poetry.requires-plugins]\npoetry-x = "*"\n')).toBe(true);
    expect(hasToolsPart("PyProject.toml", "[tool.x]\na = 1\n")).toBe(true); // as macOS opens it
  });

  test("setup.cfg: [metadata] and [options.*] are the project's, [flake8] and [tool:pytest] are not", () => {
    const cfg = "[metadata]\nname = a\n[options]\ninstall_requires = x\n[options.extras_require]\ndev = y\n";
    expect(hasToolsPart("setup.cfg", cfg)).toBe(false);
    expect(hasToolsPart("setup.cfg", `${cfg}[flake8]\nlocal-plugins = x\n`)).toBe(true);
    expect(hasToolsPart("setup.cfg", `# a comment\n\n${cfg}`)).toBe(false);
    expect(hasToolsPart("pyproject.toml", PYPROJECT)).toBe(true);
  });
});

describe("the jail and the write tools keep it", () => {
  test("a job's dependency stays; a changed tool table puts the file back whole; a new manifest with one is moved out", async () => {
    const w = tree({ "pyproject.toml": PYPROJECT, "lib/setup.cfg": "[metadata]\nname = lib\n", "tests/t.py": "" });
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: quarantine(w) });
    const deps = PYPROJECT.replace('["requests"]', '["requests", "rich"]');
    writeFileSync(join(w, "pyproject.toml"), deps);
    writeFileSync(join(w, "lib/setup.cfg"), "[metadata]\nname = lib2\n[flake8]\nlocal-plugins = ./x\n");
    writeFileSync(join(w, "sub-pyproject.toml"), "not a manifest name: ordinary\n");
    writeFileSync(join(w, "tests/pyproject.toml"), '[project]\nname = "t"\n');
    writeFileSync(join(w, "tools_pyproject"), "");
    const v = await guard.finish();
    expect(v.tamper?.changed).toEqual(["lib/setup.cfg#tools' part (restored)"]);
    expect(readFileSync(join(w, "pyproject.toml"), "utf8")).toBe(deps); // the project's own table: the job's
    expect(readFileSync(join(w, "lib/setup.cfg"), "utf8")).toBe("[metadata]\nname = lib\n");
    expect(readFileSync(join(w, "tests/pyproject.toml"), "utf8")).toContain('name = "t"'); // no tools' part: stays

    const again = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: quarantine(w) });
    writeFileSync(join(w, "pkg.toml"), "");
    writeFileSync(join(w, "new-setup.cfg"), "");
    writeFileSync(join(w, "setup.cfg"), "[tool:pytest]\naddopts = -p evil\n");
    // The manifest swapped for a link to a file of the job's: put back as a regular file.
    writeFileSync(join(w, "evil.toml"), '[tool.pylint.main]\ninit-hook = "x"\n');
    unlinkSync(join(w, "pyproject.toml"));
    symlinkSync("evil.toml", join(w, "pyproject.toml"));
    const v2 = await again.finish();
    expect(v2.tamper?.changed).toContain("setup.cfg (new)");
    expect(v2.tamper?.changed).toContain("pyproject.toml#tools' part (restored)");
    expect(readFileSync(join(w, "pyproject.toml"), "utf8")).toBe(deps);
    expect(readFileSync(join(w, "evil.toml"), "utf8")).toContain("init-hook"); // never written through the link
  });

  test("a manifest padded past what dl reads is judged by its size on disk, not by the head it read", async () => {
    const w = tree({ "pyproject.toml": PYPROJECT });
    // Over 1 MiB of three-byte characters in the project's own table: fewer characters than bytes.
    const pad = `[project]\ndescription = "${"\u20ac".repeat(400_000)}"\n`;
    const evil = `${pad}\n[tool.pylint.main]\ninit-hook = "import os"\n`;
    expect(await refusedContent(w, join(w, "pyproject.toml"), evil, PROTECT)).toContain("rule tool-config");
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: quarantine(w) });
    writeFileSync(join(w, "pyproject.toml"), evil);
    writeFileSync(
      join(w, "setup.cfg"),
      `[metadata]\ndescription = ${"\u20ac".repeat(400_000)}\n[tool:pytest]\naddopts = -p x\n`,
    );
    const v = await guard.finish();
    expect(v.tamper?.changed).toContain("pyproject.toml#tools' part (restored)");
    expect(v.tamper?.changed).toContain("setup.cfg (new)");
    expect(readFileSync(join(w, "pyproject.toml"), "utf8")).toBe(PYPROJECT);
  });

  test("the write tools refuse a change to the tools' part, not to the project's own tables", async () => {
    const w = tree({ "pyproject.toml": PYPROJECT });
    const abs = join(w, "pyproject.toml");
    expect(await refusedContent(w, abs, PYPROJECT.replace('["requests"]', '["requests", "rich"]'), PROTECT)).toBeNull();
    const hook = `${PYPROJECT}\n[tool.pylint.main]\ninit-hook = "import os"\n`;
    expect(await refusedContent(w, abs, hook, PROTECT)).toContain("rule tool-config");
    expect(await refusedContent(w, join(w, "sub/setup.cfg"), "[flake8]\nlocal-plugins = x\n", PROTECT)).toContain(
      "tool-config",
    );
    expect(await refusedContent(w, join(w, "sub/pyproject.toml"), '[project]\nname = "s"\n', PROTECT)).toBeNull();
  });
});
