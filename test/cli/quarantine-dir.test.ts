import { expect, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
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

test("dl reap removes cache-dir quarantine folders older than the job retention", async () => {
  const cache = tempDir("reap-quarantine");
  const old = join(cache, "quarantine/1");
  const recent = join(cache, "quarantine/2");
  for (const d of [old, recent]) mkdirSync(d, { recursive: true, mode: 0o700 });
  const longAgo = Date.now() / 1000 - 400 * 86_400;
  utimesSync(old, longAgo, longAgo);
  const run = async (args: string[]) => {
    const p = Bun.spawn([requireBinary(), "reap", ...args], {
      env: testEnv({ DELEGATE_CACHE_DIR: cache }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    return { stdout, code };
  };
  const dry = await run(["--dry-run", "--json"]);
  expect(JSON.parse(dry.stdout).pruned_quarantine).toBe(1);
  expect(existsSync(old)).toBe(true);
  const real = await run([]);
  expect(real.stdout).toContain("quarantine: removed 1 folder(s) older than the job retention");
  expect(existsSync(old)).toBe(false);
  expect(existsSync(recent)).toBe(true);
});
