import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import {
  identity,
  isAlive,
  parseProcStat,
  psIdentity,
  sameProcess,
  sameSessionLeader,
  selfIdentity,
  stillRunning,
} from "../../src/sys/identity.ts";
import { spawnGroup, terminateGroup } from "../../src/sys/process.ts";
import { tempDir } from "../helpers/dl.ts";
import { killPid } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const dir = tempDir("dl-identity");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ticks = (id: { startTime: string }) => Number(id.startTime.split("@")[0]);

describe("parseProcStat", () => {
  test("reads the fixed fields after the last ')' even when comm holds spaces and parens", () => {
    const fields = ["S", "10", "20", "30", ...Array.from({ length: 15 }, (_, i) => String(100 + i)), "987654", "0"];
    const parsed = parseProcStat(`4242 (a) (b c) ) d) ${fields.join(" ")}\n`);
    expect(parsed).toEqual({
      comm: "a) (b c) ) d",
      state: "S",
      ppid: 10,
      pgrp: 20,
      session: 30,
      flags: 102,
      starttime: "987654",
    });
    expect(parseProcStat("garbage")).toBeNull();
    expect(parseProcStat("1 (x) S 1 2")).toBeNull();
  });
});

describe("identity", () => {
  test("a real child: start time and full command, equal on every read", async () => {
    const c = spawnGroup({ argv: ["sleep", "30"], cwd: dir, env });
    try {
      const a = identity(c.pid);
      expect(a).not.toBeNull();
      expect(a?.pid).toBe(c.pid);
      expect(a?.command).toBe("sleep 30");
      expect(a?.startTime).not.toBe("");
      expect(identity(c.pid)).toEqual(a!);
      expect(stillRunning(a!)).toBe(true);
      expect(isAlive(c.pid)).toBe(true);
      if (process.platform === "linux") expect(ticks(a!)).toBeGreaterThanOrEqual(ticks(selfIdentity()));
    } finally {
      await terminateGroup(c.pgid, 1000);
    }
    await c.exited;
    expect(identity(c.pid)).toBeNull();
    expect(isAlive(c.pid)).toBe(false);
  });

  test("a look-alike record (same pid, other start time or command) is not the same process", async () => {
    const c = spawnGroup({ argv: ["sleep", "30"], cwd: dir, env });
    try {
      const real = identity(c.pid)!;
      expect(sameProcess(real, identity(c.pid))).toBe(true);
      // What a reused pid looks like: same number, started at another time.
      expect(sameProcess({ ...real, startTime: `${ticks(real) + 1}@x` }, identity(c.pid))).toBe(false);
      expect(sameProcess({ ...real, command: "sleep 31" }, identity(c.pid))).toBe(false);
      expect(sameProcess({ ...real, startTime: "" }, { ...real, startTime: "" })).toBe(false);
      expect(sameProcess(real, null)).toBe(false);
      // A second real process never matches the first one's record.
      const d = spawnGroup({ argv: ["sleep", "30"], cwd: dir, env });
      try {
        const other = identity(d.pid)!;
        expect(other.command).toBe(real.command);
        expect(sameProcess(real, other)).toBe(false);
      } finally {
        await terminateGroup(d.pgid, 1000);
      }
    } finally {
      await terminateGroup(c.pgid, 1000);
    }
  });

  test.if(process.platform === "linux")("a comm with spaces and ')' parses on a real process", async () => {
    const weird = join(dir, "we ird) (na me");
    symlinkSync(Bun.which("sleep")!, weird);
    const c = spawnGroup({ argv: [weird, "30"], cwd: dir, env });
    try {
      const id = identity(c.pid);
      expect(id?.command).toBe(`${weird} 30`);
      expect(ticks(id!)).toBeGreaterThanOrEqual(ticks(selfIdentity()));
    } finally {
      await terminateGroup(c.pgid, 1000);
    }
  });

  test("a zombie is dead; bad pids are null; our own identity is readable", async () => {
    // sh forks sleep and exits; the orphaned sleep is killed and may linger as a zombie
    // under a PID 1 that never reaps: it must still count as dead.
    const c = spawnGroup({ argv: ["sh", "-c", "sleep 30 & echo $!"], cwd: dir, env });
    await c.exited;
    const orphan = Number(c.stdout().text().trim());
    expect(isAlive(orphan)).toBe(true);
    killPid(orphan);
    await until(() => !isAlive(orphan), "the killed orphan to count as dead");
    expect(isAlive(orphan)).toBe(false);
    expect(identity(orphan)).toBeNull();
    for (const bad of [0, -1, 1.5, NaN]) expect(identity(bad)).toBeNull();
    expect(isAlive(0)).toBe(false);
    const me = selfIdentity();
    expect(me.pid).toBe(process.pid);
    expect(me.command).toContain("bun");
    expect(stillRunning(me)).toBe(true);
  });

  test.if(Bun.which("ps") !== null)(
    "the ps reader (macOS path) agrees with itself and sees the same command",
    async () => {
      const c = spawnGroup({ argv: ["sleep", "30"], cwd: dir, env });
      try {
        identity(c.pid); // waits out the exec window
        const a = psIdentity(c.pid);
        expect(a?.command).toBe("sleep 30");
        expect(a?.startTime).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{1,2} \d{2}:\d{2}:\d{2} \d{4}$/);
        expect(sameProcess(a!, psIdentity(c.pid))).toBe(true);
      } finally {
        await terminateGroup(c.pgid, 1000);
      }
      await c.exited;
      expect(psIdentity(c.pid)).toBeNull();
    },
  );

  test("a child that execs keeps its session-leader identity though its command changes", async () => {
    const gate = join(dir, "exec-gate");
    // sh waits for the gate, then execs into sleep: same pid, new command line.
    const c = spawnGroup({
      argv: ["sh", "-c", `while [ ! -e '${gate}' ]; do sleep 0.01; done; exec sleep 30`],
      cwd: dir,
      env,
    });
    try {
      const before = identity(c.pid)!;
      expect(before).toMatchObject({ pgid: c.pid, sid: c.pid });
      await Bun.write(gate, "");
      const after = await until(() => {
        const now = identity(c.pid);
        return now?.command === "sleep 30" ? now : null;
      }, "the child to exec into sleep");
      expect(sameProcess(before, after)).toBe(false);
      expect(sameSessionLeader(before, after)).toBe(true);
      expect(sameSessionLeader({ ...before, startTime: "1@x" }, after)).toBe(false);
      // The ps reader (macOS path) sees the same group and session leadership.
      expect(psIdentity(c.pid)).toMatchObject({ pgid: c.pid, sid: c.pid });
    } finally {
      await terminateGroup(c.pgid, 1000);
    }
    // A process that is not a session leader never passes, even with the right start time.
    const me = selfIdentity();
    if (me.sid !== me.pid) expect(sameSessionLeader(me, identity(process.pid))).toBe(false);
  });
});
