import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { Semaphore } from "../../src/agent/semaphore.ts";
import { buildTools } from "../../src/agent/tools/index.ts";
import { runBashTool } from "../../src/agent/tools/run-bash.ts";
import type { RunBashSettings } from "../../src/agent/tools/settings.ts";
import type { ToolContext } from "../../src/agent/tools/types.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { tempDir } from "../helpers/dl.ts";
import { liveWith } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

const baseEnv = {
  PATH: process.env.PATH,
  HOME: "/home/tester",
  LANG: "C.UTF-8",
  LC_ALL: "C",
  OPENAI_API_KEY: "sk-fake-openai-123",
  DELEGATE_LOCAL_KEY: "sk-fake-dl-456",
  AWS_SECRET_ACCESS_KEY: "fake-aws-789",
  GITHUB_TOKEN: "ghp_fake",
  MY_TOOL_HOME: "/opt/tool",
  NPM_CONFIG_CACHE: "/tmp/npm",
  NPM_CONFIG_TOKEN: "npm-fake-token",
  RANDOM_OTHER: "x",
};

function settings(o: Partial<RunBashSettings> = {}): RunBashSettings {
  return { ...defaultAgentSettings().bash, baseEnv, graceMs: 200, limiter: new Semaphore(4), ...o };
}

function ctx(signal = new AbortController().signal): ToolContext {
  const workdir = realpathSync(tempDir("bash"));
  return { workdir, allowEscape: false, signal };
}

const waitFor = (cond: () => boolean) => until(cond, "the condition");

describe("run_bash", () => {
  test("runs in the workdir and returns the real exit code", async () => {
    const c = ctx();
    const bash = runBashTool(settings());
    const ok = await bash.run({ command: "pwd; echo out; echo err >&2" }, c);
    expect(ok.bash).toEqual({ exitCode: 0, timedOut: false });
    expect(ok.is_error).toBe(false);
    expect(ok.content).toContain(`exit code: 0\n--- stdout ---\n${c.workdir}\nout`);
    expect(ok.content).toContain("--- stderr ---\nerr");
    const bad = await bash.run({ command: "echo failing; exit 3" }, c);
    expect(bad.bash?.exitCode).toBe(3);
    expect(bad.is_error).toBe(true);
    expect(bad.content).toStartWith("exit code: 3");
    expect((await bash.run({ command: "" }, c)).is_error).toBe(true);
  });

  test("stdout is cut to 12 KB and stderr to 4 KB with a visible marker, keeping head and tail", async () => {
    const c = ctx();
    const bash = runBashTool(settings());
    const r = await bash.run(
      {
        command:
          "echo HEAD-OUT; head -c 100000 /dev/zero | tr '\\0' o; echo; echo TAIL-OUT; echo HEAD-ERR >&2; head -c 50000 /dev/zero | tr '\\0' e >&2; echo TAIL-ERR >&2",
      },
      c,
    );
    expect(r.bash?.exitCode).toBe(0);
    const [out, err] = r.content.split("--- stderr ---");
    expect(out).toContain("HEAD-OUT");
    expect(out).toContain("TAIL-OUT");
    expect(out).toMatch(/\[\.\.\. stdout truncated: \d+ of 100019 bytes cut/);
    expect(out!.length).toBeLessThan(12 * 1024 + 300);
    expect(err).toContain("HEAD-ERR");
    expect(err).toContain("TAIL-ERR");
    expect(err).toMatch(/stderr truncated/);
    expect(err!.length).toBeLessThan(4 * 1024 + 300);
  });

  test("the timeout kills the whole process group, grandchildren included", async () => {
    const c = ctx();
    // 2 s: both shells must start and write their pid files first, even on a loaded machine.
    const bash = runBashTool(settings({ timeoutMs: 2000 }));
    // Found by a marker in their argv, not by the pid they see (as root: their own pid namespace).
    const m = String(100000 + Math.floor(Math.random() * 899999));
    const r = await bash.run(
      {
        command: `sleep 30.${m} & echo $! > child.pid; bash -c 'sleep 31.${m} & echo $! > grandchild.pid; wait' & wait`,
      },
      c,
    );
    expect(r.bash?.timedOut).toBe(true);
    expect(r.content).toContain("timed out");
    expect(r.bash?.exitCode).toBe(143); // 128 + SIGTERM
    for (const f of ["child.pid", "grandchild.pid"])
      expect(Number(readFileSync(join(c.workdir, f), "utf8"))).toBeGreaterThan(1);
    await waitFor(() => liveWith(`.${m}`).length === 0);
  });

  test("an abort kills the running command and says so", async () => {
    const ac = new AbortController();
    const c = ctx(ac.signal);
    const bash = runBashTool(settings());
    const m = `abort-${process.pid}-${Math.random()}`;
    const p = bash.run({ command: `: ${m}; echo $$ > leader.pid; sleep 30` }, c);
    await waitFor(
      () =>
        existsSync(join(c.workdir, "leader.pid")) && readFileSync(join(c.workdir, "leader.pid"), "utf8").endsWith("\n"),
    );
    expect(liveWith(m).length).toBeGreaterThan(0);
    ac.abort();
    const r = await p;
    expect(r.content).toContain("cancelled");
    expect(r.bash?.exitCode).not.toBe(0);
    expect(liveWith(m)).toEqual([]);
  });

  test("the environment is allowlisted: no key reaches the command, DELEGATE_LOCAL_KEY never", async () => {
    const c = ctx();
    const bash = runBashTool(
      settings({ passthrough: ["MY_TOOL_HOME", "NPM_CONFIG_*", "GITHUB_TOKEN", "DELEGATE_LOCAL_KEY"] }),
    );
    const r = await bash.run({ command: "env" }, c);
    const env = r.content;
    expect(env).toContain("HOME=/home/tester");
    expect(env).toContain("LC_ALL=C");
    expect(env).toContain("MY_TOOL_HOME=/opt/tool");
    expect(env).toContain("NPM_CONFIG_CACHE=/tmp/npm");
    // Explicitly named: the user asked for it.
    expect(env).toContain("GITHUB_TOKEN=ghp_fake");
    for (const secret of ["sk-fake-openai-123", "sk-fake-dl-456", "fake-aws-789", "npm-fake-token"])
      expect(env).not.toContain(secret);
    expect(env).not.toContain("RANDOM_OTHER");
  });

  test("concurrent commands wait for a slot", async () => {
    const c = ctx();
    const limiter = new Semaphore(1);
    const bash = runBashTool(settings({ limiter }));
    const cmd = (n: number) => `echo start${n} >> log; sleep 0.2; echo end${n} >> log`;
    await Promise.all([
      bash.run({ command: cmd(1) }, c),
      bash.run({ command: cmd(2) }, c),
      bash.run({ command: cmd(3) }, c),
    ]);
    const log = readFileSync(join(c.workdir, "log"), "utf8").trim().split("\n");
    // With one slot, every start is followed by its own end: no overlap.
    for (let i = 0; i < log.length; i += 2) expect(log[i + 1]).toBe(log[i]!.replace("start", "end"));
    expect(log).toHaveLength(6);
    expect(limiter.inUse).toBe(0);
  });

  test("DELEGATE_RUN_BASH=0 removes the tool", () => {
    const files = ["read_file", "write_file", "edit_file", "search_files", "list_files"];
    expect([...buildTools({ bash: settings({ enabled: false }) }).keys()]).toEqual(files);
    expect([...buildTools({ bash: settings() }).keys()]).toEqual([...files, "run_bash"]);
  });
});
