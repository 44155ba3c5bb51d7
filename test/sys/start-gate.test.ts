import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDlError } from "../../src/errors.ts";
import { runGroup, spawnGroup } from "../../src/sys/process.ts";
import { GATE_SHUT_EXIT } from "../../src/sys/start-gate.ts";
import { tempFolder } from "../helpers/dl.ts";
import { killPid, pidAlive } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

/**
 * The start gate: a job's child runs its command only once dl has recorded who it is.
 * Held, the child waits as the gate's sh; opened, the command runs; shut, or its holder
 * killed (a supervisor SIGKILLed between spawn and record), the command never runs.
 */

const root = tempFolder("dl-start-gate");
afterAll(root.cleanup);
const env = { PATH: "/usr/bin:/bin" };
let n = 0;
const marker = () => join(root.dir, `ran-${++n}`);
const writes = (file: string) => ["/bin/sh", "-c", 'echo ran > "$1"', "child", file];

/** The process's command line as the OS shows it (the test's own look, not src/sys/identity.ts). */
function commandLine(pid: number): string {
  if (process.platform === "linux") {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      return "";
    }
  }
  return Bun.spawnSync(["ps", "-ww", "-o", "command=", "-p", String(pid)]).stdout.toString();
}

/** Resolves once `pid` is the gate's sh, waiting for its line. */
const atGate = (pid: number) => until(() => commandLine(pid).includes("dl-gate"), `pid ${pid} to wait at its gate`);

describe("the start gate", () => {
  test("a held child waits as the gate's sh, its command not run; opened, the command runs", async () => {
    const file = marker();
    const child = spawnGroup({ argv: writes(file), cwd: root.dir, env, gated: true });
    await atGate(child.pid);
    expect(existsSync(file)).toBe(false);
    child.openGate();
    expect(await child.exited).toEqual({ exitCode: 0, signal: null });
    expect(readFileSync(file, "utf8")).toBe("ran\n");
  });

  test("shut, the command never runs: the entry exits 125", async () => {
    const file = marker();
    const child = spawnGroup({ argv: writes(file), cwd: root.dir, env, gated: true });
    await atGate(child.pid);
    child.shutGate();
    expect(await child.exited).toEqual({ exitCode: GATE_SHUT_EXIT, signal: null });
    expect(existsSync(file)).toBe(false);
  });

  test("its holder SIGKILLed before it opens the gate: the child ends and its command never runs", async () => {
    const file = marker();
    const holder = Bun.spawn([process.execPath, join(import.meta.dir, "../fixture/gate-holder.ts"), file], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const reader = holder.stdout.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const pid = Number(first.trim());
    expect(pid).toBeGreaterThan(1);
    await atGate(pid);
    killPid(holder.pid);
    await holder.exited;
    await until(() => !pidAlive(pid), `the gated child ${pid} to end with its holder`);
    expect(existsSync(file)).toBe(false);
  });

  test("runGroup: a gated command runs once onSpawn resolves true, never when it resolves false", async () => {
    const yes = marker();
    const ran = await runGroup({ argv: writes(yes), cwd: root.dir, env, gated: true, onSpawn: async () => true });
    expect(ran.exitCode).toBe(0);
    expect(existsSync(yes)).toBe(true);
    const no = marker();
    const refused = await runGroup({ argv: writes(no), cwd: root.dir, env, gated: true, onSpawn: async () => false });
    expect(refused.exitCode).toBe(GATE_SHUT_EXIT);
    expect(existsSync(no)).toBe(false);
  });

  test("a gated program that is not there is not_found, naming only the program, as ungated", () => {
    for (const gated of [true, false]) {
      try {
        spawnGroup({ argv: ["no-such-program-dl", "--secret-arg"], cwd: root.dir, env, gated });
        throw new Error("spawned");
      } catch (e) {
        expect(isDlError(e) && e.code).toBe("not_found");
        expect(String((e as Error).message)).toContain("could not start no-such-program-dl (ENOENT)");
        expect(String((e as Error).message)).not.toContain("--secret-arg");
      }
    }
  });
});
