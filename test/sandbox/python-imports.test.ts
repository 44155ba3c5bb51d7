import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { namedByToolConfig } from "../../src/sandbox/config-named.ts";
import {
  addsPythonModule,
  jobBytecode,
  newPythonModules,
  pythonCommands,
  pythonImported,
  pythonOf,
} from "../../src/sandbox/python-imports.ts";
import { tree as treeOf } from "./file-tree.ts";

/**
 * What a protected Python command imports of the work tree (python-imports.ts): the folder
 * it imports from first (sys.path[0]), whose new modules replace the ones it imports; the
 * modules a protected script imports beside it; and the compiled modules a job forged.
 */

const tree = (files: Record<string, string>) => treeOf(files, "python-imports");
const words = (line: string) => line.split(/\s+/);

describe("python's first import folder", () => {
  test("the script's folder, or the folder the host runs it in for -m, -c and standard input", () => {
    const w = tree({ "tools/ctx.py": "", "run.py": "" });
    const roots = (line: string) =>
      pythonCommands(words(line), [w], w, { workdir: w }).roots.map((d) => d.slice(w.length + 1) || ".");
    expect(roots("python3 tools/ctx.py --flag")).toEqual(["tools"]);
    expect(roots("/usr/bin/python3.11 -W error -X dev tools/ctx.py")).toEqual(["tools"]);
    expect(roots("PYTHONDONTWRITEBYTECODE=1 python3 -m pytest -q")).toEqual(["."]);
    expect(roots("python -Bm pytest")).toEqual(["."]);
    expect(roots("python3 -c print(1)")).toEqual(["."]);
    expect(roots("python3 - < x")).toEqual(["."]);
    expect(roots("python3 run.py")).toEqual(["."]);
    // A script outside the work tree, or not there: no folder of the tree.
    expect(roots("python3 /usr/lib/x.py")).toEqual([]);
    expect(roots("pytest -q")).toEqual([]);
    // pre-commit's own hook: the interpreter in a variable the script assigns.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the hook's own shell text
    const hook = words('INSTALL_PYTHON /opt/pc/bin/python3 ARGS x exec $INSTALL_PYTHON -mpre_commit "${ARGS[@]}"');
    expect(pythonCommands(hook, [w], w, { workdir: w })).toEqual({
      roots: [w],
      interpreters: ["/opt/pc/bin/python3"],
      modules: ["pre_commit"],
    });
    // PYTHONPATH's folders are imported from first too.
    expect(roots("PYTHONPATH src:lib python3 -m app")).toEqual([".", "src", "lib"]);
  });

  test("a protected script's imports of its own folder are named; a package folder whole; the standard library not", () => {
    const w = tree({
      ".mcp.json": JSON.stringify({
        mcpServers: {
          py: { command: "python3", args: ["tools/ctx.py"] },
          m: { command: "python3", args: ["-m", "srv"] },
        },
      }),
      "tools/ctx.py": "import json, helper as h\nfrom lib.sub import x\nimport os.path\n",
      "tools/helper.py": "from . import nothing\n",
      "tools/lib/sub.py": "",
      "tools/lib/__init__.py": "",
      "srv/__main__.py": "import common\n",
      "common.py": "",
      "other.py": "",
    });
    const n = namedByToolConfig(join(w, ".mcp.json"), { workdir: w, ignored: () => false });
    const files = n.files.map((f) => f.slice(w.length + 1)).sort();
    for (const p of ["tools/ctx.py", "tools/helper.py", "tools/lib", "tools/lib/sub.py", "srv", "common.py"])
      expect({ p, named: files.includes(p) }).toEqual({ p, named: true });
    expect(files).not.toContain("other.py");
    // The folders python runs them from, and each protected Python file's own (a package's: read-only whole anyway).
    expect(n.importRoots.map((d) => d.slice(w.length + 1) || ".").sort()).toEqual([".", "srv", "tools", "tools/lib"]);
  });

  test("the module -m runs, a one-word name too: its file or its package is named", () => {
    const w = tree({ ".husky/pre-commit": "python3 -m lint\npython3 -mtool.cli\n", "lint.py": "", "tool/cli.py": "" });
    const files = namedByToolConfig(join(w, ".husky"), { workdir: w, ignored: () => false }).files.map((f) =>
      f.slice(w.length + 1),
    );
    for (const p of ["lint.py", "tool", "tool/cli.py"])
      expect({ p, named: files.includes(p) }).toEqual({ p, named: true });
  });

  test("the interpreter a script's first line names, through env and its options too", () => {
    expect(pythonOf("x", "#!/usr/bin/env python3\n")).toBe("python3");
    expect(pythonOf("x", "#!/usr/bin/env -S python3 -u\n")).toBe("python3");
    expect(pythonOf("x", "#!/usr/bin/env -u LANG PYTHONUTF8=1 python3.11\n")).toBe("python3.11");
    expect(pythonOf("x", "#!/usr/bin/env -S uv run --script\n")).toBe("python3");
    expect(pythonOf("x", "#!/usr/bin/python3 -I\n")).toBe("/usr/bin/python3");
    expect(pythonOf("x", "#!/bin/sh\n")).toBeNull();
    expect(pythonOf("x.py", "print(1)\n")).toBe("python3");
  });

  test("a script run by its shebang or by another runner imports from its own folder first", () => {
    const w = tree({
      ".husky/pre-commit": "./scripts/check\nuv run tools/gen.py\n",
      "scripts/check": "#!/usr/bin/env python3\nimport re\n",
      "tools/gen.py": "print(1)\n",
    });
    const n = namedByToolConfig(join(w, ".husky"), { workdir: w, ignored: () => false });
    expect(n.importRoots.map((d) => d.slice(w.length + 1)).sort()).toEqual(["scripts", "tools"]);
  });

  test("the modules a source imports, by their first name; relative ones as written", () => {
    const text = "import a, b.c as d\nfrom e.f import g\nfrom .h import i\nfrom .. import j\n  import k\n";
    expect(pythonImported(text).sort()).toEqual(["..", ".h", "a", "b", "e", "k"]);
    const forms =
      "try: import other\nimport os; import third\nif X: import m\nfrom \\\n  helper import y\nimportlib.import_module('plug.x')\n__import__(\"dyn\")\n";
    expect(pythonImported(forms).sort()).toEqual(["dyn", "helper", "m", "os", "other", "plug", "third"]);
  });
});

describe("a job's new modules in a first import folder", () => {
  const kinds = (m: Record<string, string>) =>
    new Map(Object.entries(m).map(([k, kind]) => [k, { kind, id: k, sig: "1" }]));

  test("module files, packages (regular or namespace) and metadata that declares plugins count; other new entries do not", () => {
    const w = tree({
      "zz-1.0.dist-info/entry_points.txt": "[pytest11]\nzz = zz_plugin\n",
      "app-1.0.dist-info/entry_points.txt": "[console_scripts]\napp = app:main\n", // pip install -e .: a program, no plugin
    });
    const before = kinds({ "tools/ctx.py": "file", docs: "dir" });
    const after = kinds({
      "tools/ctx.py": "file",
      "tools/json.py": "file",
      "tools/notes.txt": "file",
      docs: "dir",
      "docs/__init__.py": "file",
      "pytest.py": "file",
      "main.py": "file",
      "zz-1.0.dist-info": "dir",
      "zz-1.0.dist-info/entry_points.txt": "file",
      "app-1.0.dist-info": "dir",
      "app-1.0.dist-info/entry_points.txt": "file",
      pygments: "dir",
      "pygments/formatters.py": "file",
      assets: "dir",
      "assets/logo.png": "file",
      "README.md": "file",
      "deep/er.py": "file",
      deep: "dir",
    });
    const roots = new Set(["", "tools"]);
    const every = newPythonModules(w, { before, after }, roots, null);
    expect(every.sort()).toEqual([
      "deep",
      "docs/__init__.py",
      "main.py",
      "pygments",
      "pytest.py",
      "tools/json.py",
      "zz-1.0.dist-info",
    ]);
    // Only the names an interpreter imports from elsewhere count: deep/ is the project's own; a folder without
    // __init__.py only joins a namespace package (pygments here), never wins over a module or a regular package.
    const names = new Set(["json", "pytest", "docs", "ns:pygments", "deep"]);
    expect(newPythonModules(w, { before, after }, roots, names).sort()).toEqual([
      "docs/__init__.py",
      "pygments",
      "pytest.py",
      "tools/json.py",
      "zz-1.0.dist-info",
    ]);
    // A link Python follows is a module or a package whatever its name says.
    const linked = kinds({ "tools/json": "link", "tools/notes": "link" });
    expect(newPythonModules(w, { before: kinds({}), after: linked }, new Set(["tools"]), new Set(["json"]))).toEqual([
      "tools/json",
    ]);
    // A linked *.dist-info: Python reads what it leads to (a pytest11 entry point pytest loads); its text is not judged.
    const meta = kinds({ "zz_link-1.0.dist-info": "link" });
    expect(newPythonModules(w, { before: kinds({}), after: meta }, new Set([""]), new Set(["json"]))).toEqual([
      "zz_link-1.0.dist-info",
    ]);
  });

  test("the write tools' question: would this write add a module to a root", () => {
    const w = tree({ "tools/ctx.py": "", "pkg/__init__.py": "", "tools/gettext/README.md": "" });
    const roots = [w, join(w, "tools")];
    const names = new Set(["json", "re", "email", "gettext", "ns:gettext", "test"]);
    const adds = (p: string) => addsPythonModule(join(w, p), roots, names);
    // A new test/ folder without __init__.py loses to the standard library's regular package: allowed.
    expect(adds("test/test_views.py")).toBe(false);
    expect(adds("x-1.0.dist-info/METADATA")).toBe(false);
    expect(adds("json.py")).toBe(true);
    expect(adds("tools/re.py")).toBe(true);
    expect(adds("email/__init__.py")).toBe(true);
    expect(adds("x-1.0.dist-info/entry_points.txt")).toBe(true);
    // A folder made first, its module written next: a package all the same.
    expect(adds("tools/gettext/__init__.py")).toBe(true);
    expect(adds("tools/gettext/more.py")).toBe(true);
    // An existing module edited, a file of an existing package, a file that is no module, the project's own names.
    expect(adds("tools/ctx.py")).toBe(false);
    expect(adds("pkg/new.py")).toBe(false);
    expect(adds("NOTES.md")).toBe(false);
    expect(adds("main.py")).toBe(false);
    expect(adds("newpkg/__init__.py")).toBe(false);
    // Every name counts when the interpreter could not be asked.
    expect(addsPythonModule(join(w, "main.py"), roots, null)).toBe(true);
  });
});

describe("compiled modules a job made", () => {
  test("a new or changed .pyc anywhere (ignored folders too) is the job's; one it left alone is not", () => {
    const e = (kind: string, id: string, sig: string) => ({ kind, id, sig });
    const before = new Map([
      ["a/__pycache__/m.cpython-311.pyc", e("file", "1", "s1")],
      ["b/__pycache__/n.cpython-311.pyc", e("file", "2", "s2")],
      ["c/__pycache__/o.cpython-311.pyc", e("file", "3", "s3")],
    ]);
    const after = new Map([
      ["a/__pycache__/m.cpython-311.pyc", e("file", "1", "s1")],
      ["b/__pycache__/n.cpython-311.pyc", e("file", "2", "s2-changed")],
      ["c/__pycache__/o.cpython-311.pyc", e("file", "9", "s3")],
      ["tests/__pycache__/test_ok.cpython-311-pytest-7.2.1.pyc", e("file", "4", "s4")],
      ["legacy.pyc", e("file", "5", "s5")],
      ["x.py", e("file", "6", "s6")],
    ]);
    expect(jobBytecode(before, after).sort()).toEqual([
      "b/__pycache__/n.cpython-311.pyc",
      "c/__pycache__/o.cpython-311.pyc",
      "legacy.pyc",
      "tests/__pycache__/test_ok.cpython-311-pytest-7.2.1.pyc",
    ]);
  });
});
