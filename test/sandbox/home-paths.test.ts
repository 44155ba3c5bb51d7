import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { refusedWrite } from "../../src/agent/tools/protect-write.ts";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { noMoves } from "./file-tree.ts";

/**
 * `~/` and `$HOME/` in what a host reads, when the home holds the workdir (a project at
 * ~/repo): git's core.hooksPath, a hook's `~/repo/scripts/x`, mise's `path:~/…` version,
 * direnv's `PATH_add $HOME/…`. One resolver (sys/paths.ts resolveUserPath) for git's values
 * and the tool configs', so each names the folder of the tree the host really uses.
 */

async function homeWithRepo(
  files: Record<string, string>,
): Promise<{ home: string; w: string; env: Record<string, string> }> {
  const home = realpathSync(tempDir("home-paths"));
  const w = join(home, "repo");
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(w, p)), { recursive: true });
    writeFileSync(join(w, p), text);
  }
  const env = { PATH: "/usr/bin:/bin", HOME: home };
  await runGroup({ argv: ["git", "init", "-q"], cwd: w, env });
  return { home, w, env };
}

const nothingMoved = noMoves;

describe("a home that holds the workdir", () => {
  test("core.hooksPath ~/repo/hooks: git runs that folder's hooks, and it is kept read-only", async () => {
    const { home, w, env } = await homeWithRepo({ "hooks/pre-commit": "#!/bin/sh\nexit 0\n" });
    await runGroup({ argv: ["git", "config", "core.hooksPath", "~/repo/hooks"], cwd: w, env });
    const asked = await runGroup({ argv: ["git", "rev-parse", "--git-path", "hooks"], cwd: w, env });
    expect(asked.stdout.text().trim()).toBe(join(w, "hooks"));
    const guard = await prepareTreeGuard(w, { home, env, quarantine: nothingMoved });
    expect(guard.keptReadOnly).toContain("hooks");
  });

  test("a hook's ~/repo/scripts/x and $HOME/repo/scripts/y, mise's path:~/repo/tools/node, direnv's PATH_add $HOME/repo/bin", async () => {
    const { home, w, env } = await homeWithRepo({
      "scripts/x": "#!/bin/sh\n",
      "scripts/y": "#!/bin/sh\n",
      "tools/node/bin/node": "",
      "bin/tool": "",
      ".tool-versions": "node path:~/repo/tools/node\n",
      ".envrc": "PATH_add $HOME/repo/bin\n",
    });
    writeFileSync(join(w, ".git/hooks/pre-commit"), '#!/bin/sh\n~/repo/scripts/x\n"$HOME/repo/scripts/y"\n');
    chmodSync(join(w, ".git/hooks/pre-commit"), 0o755);
    const guard = await prepareTreeGuard(w, { home, env, quarantine: nothingMoved });
    for (const p of ["scripts/x", "scripts/y", "tools/node", "bin"]) expect(guard.keptReadOnly).toContain(p);
    await guard.finish();
    const p = { writable: [], gitEnv: env };
    expect(await refusedWrite(w, join(w, "scripts/x"), p)).toContain("rule git-config");
    expect(await refusedWrite(w, join(w, "tools/node/bin/git"), p)).toContain("rule config-named");
    expect(await refusedWrite(w, join(w, "bin/ls"), p)).toContain("rule config-named");
    expect(await refusedWrite(w, join(w, "src/a.ts"), p)).toBeNull();
  });
});
