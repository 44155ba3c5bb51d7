import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { trackedGroups } from "../../src/sys/group-registry.ts";
import {
  type GroupChild,
  groupAlive,
  killAllGroupsNow,
  killGroup,
  spawnGroup,
  terminateAllGroups,
} from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { childEnv, until } from "./util.ts";

/**
 * The registry of live groups and the shutdown helpers built on it, with real shells:
 * groups that obey SIGTERM, groups that ignore it, and groups whose leader has left a
 * background child behind.
 */

const sh = (script: string): GroupChild => spawnGroup({ argv: ["/bin/sh", "-c", script], cwd: "/", env: childEnv });

const mine: number[] = [];
afterAll(() => {
  for (const p of mine) {
    try {
      killGroup(p, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

describe("group registry", () => {
  test("a group is tracked from spawn and untracked once its leader exits with nothing left", async () => {
    const c = sh("exit 0");
    mine.push(c.pgid);
    expect(trackedGroups()).toContain(c.pgid);
    await c.exited;
    expect(trackedGroups()).not.toContain(c.pgid);
  });

  test("a group whose leader exits but whose background child lives stays tracked", async () => {
    const dir = tempDir("reg");
    const pidFile = join(dir, "bg.pid");
    const c = sh(`sleep 300 & echo $! > ${pidFile}`);
    mine.push(c.pgid);
    await c.exited;
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), "the background pid");
    expect(groupAlive(c.pgid)).toBe(true);
    expect(trackedGroups()).toContain(c.pgid);
    const r = await terminateAllGroups(1000, 1000);
    expect(r.survivors).toEqual([]);
    expect(groupAlive(c.pgid)).toBe(false);
    expect(trackedGroups()).not.toContain(c.pgid);
  });

  test("terminateAllGroups: SIGTERM for the obedient, SIGKILL after the grace for the rest, all gone when it resolves", async () => {
    const dir = tempDir("reg");
    const obedient = [sh("sleep 300"), sh("sleep 300")];
    // Ignore TERM in the shell and its child; write a marker once the trap is set.
    const stubborn = [0, 1].map((i) => sh(`trap '' TERM; sleep 300 & touch ${join(dir, `ready${i}`)}; wait`));
    const all = [...obedient, ...stubborn];
    mine.push(...all.map((c) => c.pgid));
    await until(() => existsSync(join(dir, "ready0")) && existsSync(join(dir, "ready1")), "the traps to be set");
    const before = trackedGroups();
    for (const c of all) expect(before).toContain(c.pgid);

    const t0 = performance.now();
    const r = await terminateAllGroups(300, 2000);
    const ms = Math.round(performance.now() - t0);
    console.log(
      `terminateAllGroups: ${r.signalled} signalled, ${r.killed} killed, ${r.survivors.length} survivors in ${ms} ms`,
    );
    expect(r.signalled).toBeGreaterThanOrEqual(4);
    expect(r.killed).toBeGreaterThanOrEqual(2); // the two that ignore TERM at least
    expect(r.survivors).toEqual([]);
    for (const c of all) expect(groupAlive(c.pgid)).toBe(false);
    for (const c of all) expect(trackedGroups()).not.toContain(c.pgid);
    // Waited for the grace before SIGKILL, but not for the full kill wait.
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(2000);
    const exits = await Promise.all(stubborn.map((c) => c.exited));
    expect(exits.map((e) => e.signal)).toEqual(["SIGKILL", "SIGKILL"]);
  });

  test("with nothing tracked, terminateAllGroups resolves at once", async () => {
    killAllGroupsNow();
    const t0 = performance.now();
    const r = await terminateAllGroups(5000);
    expect(r).toEqual({ signalled: 0, killed: 0, survivors: [] });
    expect(performance.now() - t0).toBeLessThan(500);
  });

  test("killAllGroupsNow SIGKILLs every tracked group without waiting", async () => {
    const c = sh("trap '' TERM; sleep 300");
    mine.push(c.pgid);
    expect(killAllGroupsNow()).toBeGreaterThanOrEqual(1);
    expect(trackedGroups()).not.toContain(c.pgid);
    expect((await c.exited).signal).toBe("SIGKILL");
  });
});
