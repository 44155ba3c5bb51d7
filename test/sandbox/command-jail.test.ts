import { describe, expect, test } from "bun:test";
import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { Semaphore } from "../../src/agent/semaphore.ts";
import { runBashTool } from "../../src/agent/tools/run-bash.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { type CommandJail, commandJail } from "../../src/sandbox/command-jail.ts";
import { prepareTreeGuard, treeReport } from "../../src/sandbox/index.ts";
import type { JailProbe } from "../../src/sandbox/probe.ts";
import { freshQuarantine } from "../../src/sandbox/quarantine.ts";
import { markedEntry } from "../../src/sys/jail-start.ts";
import { runGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { requireLinuxProbe, skipBwrap } from "./jail-env.ts";

/** run_bash inside the command jail: no fallback when the jail cannot start. */

const BROKEN: JailProbe = {
  kind: "bwrap",
  ok: false,
  detail: "bwrap not found on PATH",
  fix: "install bubblewrap: apt-get install bubblewrap",
  bin: null,
};

function bash(probe: () => Promise<JailProbe>, platform: NodeJS.Platform = "linux") {
  const jail = commandJail({
    platform,
    home: process.env.HOME!,
    stateDirs: [],
    path: "/usr/bin:/bin",
    gitEnv: { PATH: "/usr/bin:/bin" },
    quarantineRoot: tempDir("never-used-quarantine"),
    probe,
  });
  return runBashTool({
    ...defaultAgentSettings().bash,
    baseEnv: { PATH: "/usr/bin:/bin", HOME: process.env.HOME },
    limiter: new Semaphore(2),
    graceMs: 200,
    jail,
  });
}

const ctx = () => ({
  workdir: realpathSync(tempDir("cmd-jail")),
  allowEscape: false,
  signal: new AbortController().signal,
});

describe("run_bash in the command jail", () => {
  test("a jail that cannot start is an error naming the fix, and the command never runs", async () => {
    const c = ctx();
    const r = await bash(async () => BROKEN).run({ command: "echo ran > ran.txt" }, c);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("the jail cannot start");
    expect(r.content).toContain("apt-get install bubblewrap");
    expect(await Bun.file(`${c.workdir}/ran.txt`).exists()).toBe(false);
  });

  test("a platform without a jail is refused the same way", async () => {
    const r = await bash(async () => BROKEN, "win32").run({ command: "true" }, ctx());
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("DELEGATE_RUN_BASH_SANDBOX");
  });

  test.skipIf(skipBwrap)("inside the real jail: HOME is empty, the workdir is the cwd", async () => {
    const c = ctx();
    const r = await bash(async () => requireLinuxProbe()).run({ command: 'pwd; ls -A "$HOME" | wc -l' }, c);
    expect(r.bash?.exitCode).toBe(0);
    expect(r.content).toContain(`${c.workdir}\n0`);
  });
});

test("run_bash: a command that planted a nested repository gets jail_git_tampered, and it is moved out to a private folder of its own", async () => {
  const root = join(tempDir("cmd-quarantine"), "quarantine");
  // A jail whose mounts failed, as far as the check knows: the command runs unjailed,
  // with the same walks and check around it.
  const leaky: CommandJail = {
    async wrap(argv, env, workdir) {
      const quarantine = () => freshQuarantine(root);
      const guard = await prepareTreeGuard(workdir, {
        home: process.env.HOME!,
        env: { PATH: "/usr/bin:/bin" },
        quarantine,
      });
      return {
        argv: markedEntry(argv),
        env: { ...env },
        jailNet: null,
        jailMarked: true,
        dispose: async () => {
          const verdict = await guard.finish();
          return { tamper: verdict.tamper, report: treeReport(verdict, guard.keptReadOnly) };
        },
      };
    },
  };
  const tool = runBashTool({
    ...defaultAgentSettings().bash,
    baseEnv: { PATH: "/usr/bin:/bin", HOME: process.env.HOME },
    limiter: new Semaphore(2),
    graceMs: 200,
    jail: leaky,
  });
  const c = ctx();
  await runGroup({ argv: ["git", "init", "-q"], cwd: c.workdir, env: { PATH: "/usr/bin:/bin" } });
  const r = await tool.run({ command: "mkdir inner && git -C inner init -q && echo x > inner/a.txt" }, c);
  expect(r.is_error).toBe(true);
  expect(r.content).toContain("[jail_git_tampered:");
  expect(r.content).toContain("inner/.git (new)");
  // What the command changed and what stayed read-only, measured by dl, in the result.
  expect(r.content).toContain("files changed: 1 added, 0 changed, 0 deleted\n  added inner/a.txt");
  expect(r.content).toMatch(/kept read-only: \d+ paths \(git metadata/);
  expect(await Bun.file(`${c.workdir}/inner/.git/HEAD`).exists()).toBe(false);
  // The verdict (for the run's failure too) names where it went: a new folder per command.
  expect(r.tamper).toContain(`moved out of the workdir to ${root}/1`);
  const again = await tool.run({ command: "git -C inner init -q" }, c);
  expect(again.tamper).toContain(`moved out of the workdir to ${root}/2`);
  for (const n of ["1", "2"]) {
    expect(await Bun.file(join(root, n, "inner/.git/HEAD")).exists()).toBe(true);
    expect(statSync(join(root, n)).mode & 0o777).toBe(0o700);
  }
  expect(statSync(root).mode & 0o777).toBe(0o700);
});
