import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tryLock } from "../../src/sys/flock.ts";
import { SlotPool } from "../../src/sys/slots.ts";
import { tempDir } from "../helpers/dl.ts";
import { startFixture, stopAll, until } from "./util.ts";

const root = tempDir("dl-slots");
afterEach(stopAll);
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `pool${n++}`);

interface Ev {
  id: string;
  pid: number;
  seq: number;
  ev: "start" | "enter" | "leave" | "done";
  slot?: number;
  count?: number;
}
const readEvents = (file: string): Ev[] =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Ev)
    : [];

describe("SlotPool in one process", () => {
  test("a lease held with `using` frees its slot and clears its record when the scope ends", () => {
    const pool = new SlotPool({ dir: freshDir(), size: 1 });
    let path = "";
    {
      using lease = pool.tryAcquire({ label: "scoped" });
      path = lease!.path;
      expect(pool.free()).toBe(0);
    }
    expect(readFileSync(path, "utf8")).toBe("");
    expect(pool.free()).toBe(1);
  });

  test("a lease writes its record through the lock; release clears it; a full pool says null", () => {
    const pool = new SlotPool({ dir: freshDir(), size: 2 });
    const a = pool.tryAcquire({ label: "glm-5", model: "glm-5.1" })!;
    expect(a.record).toMatchObject({ label: "glm-5", model: "glm-5.1", pid: process.pid });
    expect(Date.parse(a.record.since)).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.parse(readFileSync(a.path, "utf8"))).toEqual(a.record);
    const b = pool.tryAcquire({ label: "other" })!;
    expect(b.index).not.toBe(a.index);
    expect(pool.tryAcquire({ label: "third" })).toBeNull();
    const states = pool.holders();
    expect(states.map((s) => s.held)).toEqual([true, true]);
    expect(states[a.index]?.record).toEqual(a.record);
    a.release();
    a.release();
    expect(readFileSync(a.path, "utf8")).toBe("");
    expect(pool.holders()[a.index]).toEqual({ index: a.index, held: false, record: null });
    expect(pool.free()).toBe(1);
    b.release();
  });

  test("the lock is the truth: a record in a free slot file is reported free and cleared", () => {
    const pool = new SlotPool({ dir: freshDir(), size: 1 });
    writeFileSync(pool.slotPath(0), JSON.stringify({ pid: 999999, label: "ghost", since: "2020-01-01T00:00:00Z" }));
    expect(pool.holders()).toEqual([{ index: 0, held: false, record: null }]);
    expect(readFileSync(pool.slotPath(0), "utf8")).toBe("");
  });

  test("leases start at a random index, so holders spread over the pool", () => {
    const pool = new SlotPool({ dir: freshDir(), size: 3 });
    const seen = new Set<number>();
    for (let i = 0; i < 60; i++) {
      const l = pool.tryAcquire({ label: "x" })!;
      seen.add(l.index);
      l.release();
    }
    expect(seen.size).toBe(3);
  });

  test("waiting: counted while pending, busy after timeout, cancelled on abort, marker removed", async () => {
    const pool = new SlotPool({ dir: freshDir(), size: 1 });
    const held = pool.tryAcquire({ label: "held" })!;
    const t0 = performance.now();
    const timedOut = pool.acquire({ holder: { label: "w1" }, timeoutMs: 80 });
    expect(pool.waiting()).toBe(1);
    await expect(timedOut).rejects.toMatchObject({ code: "busy", data: { size: 1 } });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(79);
    expect(pool.waiting()).toBe(0);

    const ac = new AbortController();
    const cancelled = pool.acquire({ holder: { label: "w2" }, signal: ac.signal, maxPollMs: 1000 });
    const third = pool.acquire({ holder: { label: "w3" }, timeoutMs: 10_000 });
    expect(pool.waiting()).toBe(2);
    ac.abort();
    await expect(cancelled).rejects.toMatchObject({ code: "cancelled" });
    expect(pool.waiting()).toBe(1);
    held.release();
    const got = await third;
    expect(got.record.label).toBe("w3");
    expect(pool.waiting()).toBe(0);
    expect(readdirSync(join(pool.dir, "waiting"))).toEqual([]);
    got.release();
  });

  test("a resized pool ignores slots beyond its size", () => {
    const dir = freshDir();
    const big = new SlotPool({ dir, size: 3 });
    const small = new SlotPool({ dir, size: 2 });
    const h0 = tryLock(big.slotPath(0))!;
    const h1 = tryLock(big.slotPath(1))!;
    expect(big.free()).toBe(1); // slot-2 is free …
    expect(small.tryAcquire({ label: "x" })).toBeNull(); // … but not part of the smaller pool
    expect(small.holders()).toHaveLength(2);
    const l = big.tryAcquire({ label: "y" })!;
    expect(l.index).toBe(2);
    l.release();
    h0.release();
    h1.release();
    expect(() => new SlotPool({ dir, size: 0 })).toThrow(/slots >= 1/);
  });
});

describe("SlotPool across processes", () => {
  test("6 processes on 3 slots: never more than 3 holders, never two on one slot", async () => {
    const dir = freshDir();
    new SlotPool({ dir, size: 3 });
    const events = join(dir, "events.jsonl");
    const procs = 6;
    const rounds = 8;
    const t0 = performance.now();
    const kids = Array.from({ length: procs }, (_, i) =>
      startFixture("slot-holder.ts", [dir, "3", events, String(i), String(rounds), "10", "together"]),
    );
    // All six start their rounds together, however unevenly their processes started.
    await until(() => readEvents(events).filter((e) => e.ev === "start").length === procs, "every holder to start");
    writeFileSync(join(dir, "go"), "");
    const exits = await Promise.all(kids.map((k) => k.exited));
    const wall = performance.now() - t0;
    for (const [i, e] of exits.entries()) {
      expect({ i, ...e, err: kids[i]!.stderr().text() }).toEqual({ i, exitCode: 0, signal: null, err: "" });
    }
    const evs = readEvents(events);
    let live = 0;
    let maxLive = 0;
    const bySlot = new Map<number, string>();
    for (const e of evs) {
      if (e.ev === "enter") {
        live++;
        maxLive = Math.max(maxLive, live);
        expect(bySlot.has(e.slot!)).toBe(false); // nobody else is inside this slot
        bySlot.set(e.slot!, e.id);
      } else if (e.ev === "leave") {
        live--;
        expect(bySlot.get(e.slot!)).toBe(e.id);
        bySlot.delete(e.slot!);
      }
    }
    const enters = evs.filter((e) => e.ev === "enter");
    const maxCounter = Math.max(...enters.map((e) => e.count!));
    expect(enters).toHaveLength(procs * rounds);
    expect(maxLive).toBeLessThanOrEqual(3);
    expect(maxCounter).toBeLessThanOrEqual(3);
    expect(maxLive).toBe(3); // the pool was really contended: the cap, not luck, held the line
    expect(live).toBe(0);
    expect(readFileSync(join(dir, "test-counter"), "utf8")).toBe("0");
    expect(new Set(enters.map((e) => e.slot))).toEqual(new Set([0, 1, 2]));
    console.log(
      `${procs} procs x ${rounds} rounds on 3 slots: ${enters.length} holds, max concurrent by event order ${maxLive}, by locked counter ${maxCounter}, wall ${wall.toFixed(0)} ms`,
    );
  });

  test("SIGKILL of a holder frees its slot at once for a waiting process; dead waiters are not counted", async () => {
    const dir = freshDir();
    const pool = new SlotPool({ dir, size: 3 });
    const events = join(dir, "events.jsonl");
    const holders = [0, 1, 2].map((i) =>
      startFixture("slot-holder.ts", [dir, "3", events, `h${i}`, "1", "0", "forever"]),
    );
    await until(() => readEvents(events).filter((e) => e.ev === "enter").length === 3, "3 holders inside");
    const states = pool.holders();
    expect(states.every((s) => s.held)).toBe(true);
    expect(new Set(states.map((s) => s.record?.pid))).toEqual(new Set(holders.map((h) => h.pid)));

    // A waiter that dies while waiting leaves a marker nobody holds: not counted, removed.
    const doomed = startFixture("slot-holder.ts", [dir, "3", events, "doomed", "1", "0"]);
    await until(() => pool.waiting() === 1, "doomed waiter to register");
    process.kill(doomed.pid, "SIGKILL");
    await doomed.exited;
    expect(pool.waiting()).toBe(0);
    expect(readdirSync(join(dir, "waiting"))).toEqual([]);

    const waiter = startFixture("slot-holder.ts", [dir, "3", events, "w", "1", "0"]);
    await until(() => pool.waiting() === 1, "waiter to register");
    const victim = holders[1]!;
    const victimSlot = readEvents(events).find((e) => e.ev === "enter" && e.pid === victim.pid)!.slot;
    const t0 = performance.now();
    process.kill(victim.pid, "SIGKILL");
    await until(() => readEvents(events).some((e) => e.id === "w" && e.ev === "enter"), "waiter to get the freed slot");
    const ms = performance.now() - t0;
    const got = readEvents(events).find((e) => e.id === "w" && e.ev === "enter")!;
    expect(got.slot).toBe(victimSlot);
    expect((await waiter.exited).exitCode).toBe(0);
    expect(pool.waiting()).toBe(0);
    const after = pool.holders();
    expect(after.filter((s) => s.held)).toHaveLength(2);
    expect(after[victimSlot!]).toEqual({ index: victimSlot!, held: false, record: null });
    console.log(`slot handed over ${ms.toFixed(1)} ms after SIGKILL of its holder`);
  });
});

describe("a pool never hands out more than its size", () => {
  test("size 3: three leases, then null until one is released", () => {
    const dir = tempDir("dl-slots-size");
    try {
      const pool = new SlotPool({ dir, size: 3 });
      const leases = [0, 1, 2].map(() => pool.tryAcquire({ label: "t" }));
      expect(leases.every(Boolean)).toBe(true);
      expect(new Set(leases.map((l) => l!.index))).toEqual(new Set([0, 1, 2]));
      for (let i = 0; i < 20; i++) expect(pool.tryAcquire({ label: "over" })).toBeNull();
      const freed = leases[1]!.index;
      leases[1]!.release();
      const again = pool.tryAcquire({ label: "again" });
      expect(again?.index).toBe(freed);
      again!.release();
      for (const l of leases) l!.release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
