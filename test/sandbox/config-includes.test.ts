import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { namedByToolConfig } from "../../src/sandbox/config-named.ts";
import { tree as treeOf } from "./file-tree.ts";

/**
 * What a hook runs through files it reads as its own: a runner file's includes (make's
 * `include`/`-include`, just's `import`/`mod`, Task's `includes:`), read by the runner
 * row's reader, and the shell's `. file` (bash reads a bare name from its folder).
 */

const tree = (files: Record<string, string>) => treeOf(files, "config-includes");

const everyNamed = (w: string, hook: string) =>
  namedByToolConfig(join(w, hook), { workdir: w, ignored: () => false }, w)
    .files.map((f) => f.slice(w.length + 1))
    .sort();
/** The named files that are there (the absent ones are watched: asserted on their own). */
const named = (w: string, hook: string) => everyNamed(w, hook).filter((f) => existsSync(join(w, f)));

describe("a runner file's includes", () => {
  test("make: include and -include (bare names, from make's folder), their includes and what their recipes run", () => {
    const w = tree({
      "hooks/pre-commit": "#!/bin/sh\nmake -s check\n",
      Makefile: "check:\n\t@true\ninclude rules.mk\n-include local.mk absent.mk $(wildcard x/*.mk)\n",
      "rules.mk": "check: more\nmore:\n\t@sh tools/c.sh\nsinclude sub/deep.mk\n",
      "local.mk": "L = 1\n",
      "sub/deep.mk": "D = 1\n",
      "tools/c.sh": "exit 0\n",
    });
    expect(named(w, "hooks/pre-commit")).toEqual(["Makefile", "local.mk", "rules.mk", "sub/deep.mk", "tools/c.sh"]);
    // Watched, though absent: absent.mk (make reads it once a job writes it); the names make
    // tries before Makefile (a new GNUmakefile is the one it reads); and what make's built-in
    // rules remake a makefile it read from before it runs anything (`%: %.sh` is `cat $< >$@`).
    const all = everyNamed(w, "hooks/pre-commit");
    for (const p of [
      "absent.mk",
      "GNUmakefile",
      "makefile",
      "Makefile.sh",
      "Makefile.c",
      "Makefile,v",
      "RCS/Makefile,v",
      "SCCS/s.Makefile",
      "s.Makefile",
      "local.mk.sh",
      "absent.mk.sh",
      "rules.mk.sh",
    ])
      expect({ p, named: all.includes(p) }).toEqual({ p, named: true });
    expect(all.filter((p) => p.startsWith("tools/"))).toEqual(["tools/c.sh"]);
  });

  test("make -C sub: the includes are read from sub, where make runs", () => {
    const w = tree({
      "hooks/pre-commit": "make -C sub x\n",
      "sub/Makefile": "include common.mk\n",
      "sub/common.mk": "x:\n",
      "common.mk": "not this one\n",
    });
    expect(named(w, "hooks/pre-commit")).toEqual(["sub/Makefile", "sub/common.mk"]);
    const all = everyNamed(w, "hooks/pre-commit");
    expect(all).toContain("sub/GNUmakefile");
    expect(all).not.toContain("GNUmakefile");
  });

  test("just: import and mod with a path, from the justfile's folder; Task: includes", () => {
    const w = tree({
      "hooks/pre-commit": "just fmt\ntask -d ci lint\n",
      justfile: "import 'just/common.just'\nmod? tools 'just/tools.just'\n",
      "just/common.just": "fmt:\n  true\n",
      "just/tools.just": "x:\n  true\n",
      "ci/Taskfile.yml": "version: '3'\nincludes:\n  docs: ./docs\n  build:\n    taskfile: ./build.yml\n",
      "ci/docs/Taskfile.yml": "version: '3'\n",
      "ci/build.yml": "version: '3'\n",
    });
    expect(named(w, "hooks/pre-commit")).toEqual([
      "ci/Taskfile.yml",
      "ci/build.yml",
      "ci/docs/Taskfile.yml",
      "just/common.just",
      "just/tools.just",
      "justfile",
    ]);
    // Every name each runner looks for is watched: a new .justfile or ci/taskfile.yml.
    const all = everyNamed(w, "hooks/pre-commit");
    for (const p of [".justfile", "Justfile", "ci/Taskfile.yaml", "ci/taskfile.yml"]) expect(all).toContain(p);
  });
});

test("make -I: an include is looked for in the folders it names too", () => {
  const w = tree({
    "hooks/pre-commit": "make -I mk --include-dir=more check\n",
    Makefile: "include rules.mk\n-include extra.mk\n",
    "mk/rules.mk": "",
    "more/extra.mk": "",
  });
  expect(named(w, "hooks/pre-commit")).toEqual(["Makefile", "mk/rules.mk", "more/extra.mk"]);
  expect(everyNamed(w, "hooks/pre-commit")).toContain("rules.mk"); // absent where make looks first: watched
});

test("an include continued on the next line, as make joins it", () => {
  const w = tree({
    "hooks/pre-commit": "make -s check\n",
    Makefile: "include a.mk \\\n  b.mk\n",
    "a.mk": "",
    "b.mk": "",
  });
  expect(named(w, "hooks/pre-commit")).toEqual(["Makefile", "a.mk", "b.mk"]);
});

test("more includes than dl reads: refused, not read in part", () => {
  const files: Record<string, string> = { "hooks/pre-commit": "make -s check\n", Makefile: "include m0.mk\n" };
  for (let i = 0; i < 1000; i++) files[`m${i}.mk`] = `include m${i + 1}.mk\n`;
  files["m1000.mk"] = "check:\n\t@sh tools/c.sh\n";
  const w = tree(files);
  expect(() => everyNamed(w, "hooks/pre-commit")).toThrow(/includes more than 1000 files/);
}, 30_000);

describe("the shell's . file", () => {
  test("`. hookenv` at a command's start names the bare file; `eslint . && notes` does not make notes read-only", () => {
    const w = tree({
      "hooks/pre-commit": "#!/bin/bash\n. hookenv\nif true; then . lib/more; fi\neslint . && notes\n",
      hookenv: "export A=1\n",
      "lib/more": "true\n",
      notes: "prose\n",
    });
    expect(named(w, "hooks/pre-commit")).toEqual(["hookenv", "lib/more"]);
  });
});
