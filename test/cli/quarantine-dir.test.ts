import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";

/**
 * dl run --quarantine-dir (an agent job's folder for what run_bash's jail moves out) is
 * made private before anything runs: a path dl cannot make a folder of refuses the run at
 * once, not when a planted entry has to be moved into it after a command.
 */

test("a --quarantine-dir that cannot be made is refused before the run starts", async () => {
  const base = tempDir("quarantine-dir");
  const workdir = join(base, "w");
  mkdirSync(join(workdir, ".claude/agents"), { recursive: true });
  writeFileSync(join(workdir, ".claude/agents/coder.md"), "---\nname: coder\ndescription: edits code\n---\nEdit.\n");
  writeFileSync(join(base, "a-file"), "");
  const p = Bun.spawn(
    [requireBinary(), "run", "coder", "hi", "--workdir", workdir, "--quarantine-dir", join(base, "a-file/q")],
    { env: testEnv(), stdout: "pipe", stderr: "pipe" },
  );
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  expect(stderr).toContain(
    `--quarantine-dir ${join(base, "a-file/q")} is invalid: dl cannot make it a private folder (ENOTDIR)`,
  );
  expect(stderr).not.toContain("taking a slot");
  expect(code).not.toBe(0);
});
