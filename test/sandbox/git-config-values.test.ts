import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tree } from "./file-tree.ts";

/**
 * What git runs is the value it parsed, not the config file's bytes: `nbstripout
 * --install` stores its clean filter as `clean = \"/usr/bin/python3\" -m nbstripout`,
 * and git runs `"/usr/bin/python3" -m nbstripout` from the work tree's root, which imports
 * a new nbstripout.py there first (sandbox/git-config-text.ts).
 */
async function git(cwd: string, ...args: string[]) {
  const r = await runGroup({ argv: ["git", ...args], cwd, env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

test("a clean filter stored with escaped quotes (nbstripout --install): the module its python -m imports is refused", async () => {
  const w = tree({ "nb.ipynb": '{"cells":[]}\n', "src/a.py": "" });
  await git(w, "init", "-q");
  await git(w, "config", "filter.nbstripout.clean", '"/usr/bin/python3" -m nbstripout');
  await git(w, "config", "diff.ipynb.textconv", '"/usr/bin/python3" -m nbstripout -t');
  writeFileSync(join(w, ".git/info/attributes"), "*.ipynb filter=nbstripout diff=ipynb\n");
  const p = { writable: [], gitEnv: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" } };
  for (const path of ["nbstripout.py", "nbstripout/__init__.py"])
    expect({ path, refused: await refusedWrite(w, join(w, path), p) }).toEqual({
      path,
      refused: expect.stringContaining("path_refused"),
    });
  expect(await refusedWrite(w, join(w, "src/a.py"), p)).toBeNull();
});
