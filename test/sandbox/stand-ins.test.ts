import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prepareTreeGuard } from "../../src/sandbox/index.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { HOST_ENV } from "./file-tree.ts";

/**
 * Stand-ins (stand-ins.ts): absent entries a host reads while a job runs are there,
 * empty, for the job's duration (the jail binds them read-only), and gone after. What the
 * host itself writes into one meanwhile (Claude Code saving a permission, `npm install`
 * filling husky's folder) is the host's: it stays, and does not fail the job.
 */

const ENV = HOST_ENV;

async function repo(): Promise<string> {
  const w = realpathSync(tempDir("stand-ins"));
  await runGroup({ argv: ["git", "init", "-q"], cwd: w, env: ENV });
  await runGroup({ argv: ["git", "config", "core.hooksPath", ".husky/_"], cwd: w, env: ENV });
  await runGroup({ argv: ["git", "config", "include.path", "../.gitconfig.local"], cwd: w, env: ENV });
  return w;
}

/** These jobs plant nothing: a move out would be a wrong verdict. */
const nothingMoved = (): string => {
  throw new Error("nothing here is the job's doing: nothing may be moved out");
};

describe("stand-ins", () => {
  test("exist while the job runs (an included config as an empty file), gone after", async () => {
    const w = await repo();
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    expect(statSync(join(w, ".gitconfig.local")).size).toBe(0);
    for (const d of [".claude", ".vscode", ".husky/_"]) expect(statSync(join(w, d)).isDirectory()).toBe(true);
    expect(guard.protectedPaths.map((p) => p.path.slice(w.length + 1)).sort()).toEqual(
      expect.arrayContaining([".claude", ".gitconfig.local", ".husky", ".husky/_", ".vscode"]),
    );
    const verdict = await guard.finish();
    expect(verdict.tamper).toBeNull();
    for (const p of [".claude", ".vscode", ".husky", ".gitconfig.local"]) expect(existsSync(join(w, p))).toBe(false);
  });

  test("what the host writes into one during the job stays, and is not the job's doing", async () => {
    const w = await repo();
    const guard = await prepareTreeGuard(w, { home: ENV.HOME, env: ENV, quarantine: nothingMoved });
    writeFileSync(join(w, ".claude/settings.local.json"), '{"permissions":{"allow":["Bash(ls)"]}}');
    mkdirSync(join(w, ".husky/_/h"), { recursive: true });
    writeFileSync(join(w, ".husky/_/pre-commit"), "#!/bin/sh\n");
    writeFileSync(join(w, ".gitconfig.local"), "[user]\n\tname = me\n");
    const verdict = await guard.finish();
    expect(verdict.tamper).toBeNull();
    expect(readFileSync(join(w, ".claude/settings.local.json"), "utf8")).toContain("Bash(ls)");
    expect(existsSync(join(w, ".husky/_/pre-commit"))).toBe(true);
    expect(readFileSync(join(w, ".gitconfig.local"), "utf8")).toContain("name = me");
    expect(existsSync(join(w, ".vscode"))).toBe(false);
  });
});
