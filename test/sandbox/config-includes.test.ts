import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { namedByToolConfig } from "../../src/sandbox/config-named.ts";
import { tree as treeOf } from "./file-tree.ts";

/**
 * What a hook runs through files it reads as its own: a runner file's includes (make's
 * `include`/`-include`, just's `import`/`mod`, Task's `includes:`), read by the runner
 * row's reader, and the shell's `. file` (bash reads a bare name from its folder).
 */

const tree = (files: Record<string, string>) => treeOf(files, "config-includes");

const named = (w: string, hook: string) =>
  namedByToolConfig(join(w, hook), { workdir: w, ignored: () => false }, w)
    .files.map((f) => f.slice(w.length + 1))
    .sort();

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
    // absent.mk too: make reads it once a job writes it.
    expect(named(w, "hooks/pre-commit")).toEqual([
      "Makefile",
      "absent.mk",
      "local.mk",
      "rules.mk",
      "sub/deep.mk",
      "tools/c.sh",
    ]);
  });

  test("make -C sub: the includes are read from sub, where make runs", () => {
    const w = tree({
      "hooks/pre-commit": "make -C sub x\n",
      "sub/Makefile": "include common.mk\n",
      "sub/common.mk": "x:\n",
      "common.mk": "not this one\n",
    });
    expect(named(w, "hooks/pre-commit")).toEqual(["sub/Makefile", "sub/common.mk"]);
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
  });
});

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
