import { expect, test } from "bun:test";
import { existsSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { pruneIdlePools } from "../../src/dispatch/prune.ts";
import { pruneIdlePool, SlotPool } from "../../src/sys/slots.ts";
import { tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";

const HOUR = 3_600_000;
const age = (dir: string, ms: number) => {
  const t = new Date(Date.now() - ms);
  for (const f of ["slot-0.lock", "slot-1.lock"]) if (existsSync(join(dir, f))) utimesSync(join(dir, f), t, t);
};

test("an idle pool folder is removed; a held, a waited-for or a recently used one stays", async () => {
  const root = tempDir("prune");
  const idle = join(root, "some-model");
  const pool = new SlotPool({ dir: idle, size: 2 });
  pool.tryAcquire({ label: "x" })!.release();
  expect(pruneIdlePool(idle, HOUR)).toBe(false); // used a moment ago
  age(idle, 2 * HOUR);
  const lease = pool.tryAcquire({ label: "x" })!;
  age(idle, 2 * HOUR);
  expect(pruneIdlePool(idle, HOUR)).toBe(false); // held
  lease.release();
  age(idle, 2 * HOUR);
  // A waiter (another dispatch queued for this pool) keeps it too.
  const blockers = [pool.tryAcquire({ label: "a" })!, pool.tryAcquire({ label: "b" })!];
  const waiting = pool.acquire({ holder: { label: "w" }, timeoutMs: 5_000 });
  await until(() => pool.waiting() > 0, "the waiter to be counted");
  for (const b of blockers) b.release();
  (await waiting).release();
  age(idle, 2 * HOUR);
  expect(pruneIdlePool(idle, HOUR)).toBe(true);
  expect(existsSync(idle)).toBe(false);
  // The SlotPool made before the prune still works: the folder is made again.
  const again = pool.tryAcquire({ label: "after" });
  expect(again).not.toBeNull();
  again!.release();
  expect(existsSync(join(idle, "slot-0.lock")) || existsSync(join(idle, "slot-1.lock"))).toBe(true);
});

test("pruneIdlePools keeps the documented buckets and removes idle model folders", () => {
  const slots = tempDir("prune-slots");
  for (const b of ["local-", "fuzz-model-1", "fuzz-model-2"]) {
    const dir = join(slots, b);
    new SlotPool({ dir, size: 2 }).tryAcquire({ label: "x" })!.release();
    age(dir, 2 * HOUR);
  }
  expect(pruneIdlePools(slots, HOUR).sort()).toEqual(["fuzz-model-1", "fuzz-model-2"]);
  expect(existsSync(join(slots, "local-"))).toBe(true);
});

test("pruning while other processes take and free the slot never lets two hold it", async () => {
  const dir = join(tempDir("prune-race"), "racing-model");
  const logDir = tempDir("prune-race-log");
  const events = join(logDir, "events.jsonl");
  const stop = join(logDir, "stop");
  const racer = join(import.meta.dir, "..", "fixture", "prune-racer.ts");
  const run = (role: string, max: number) =>
    Bun.spawn([process.execPath, racer, role, dir, events, stop, String(max)], { stdout: "ignore", stderr: "inherit" });
  // The holders keep going until the pruner has removed the folder three times.
  const procs = [run("hold", 5000), run("hold", 5000), run("prune", 1_000_000)];
  expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0]);
  const lines = readFileSync(events, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { ev: string });
  let holding = 0;
  let peak = 0;
  for (const { ev } of lines) {
    if (ev === "enter") holding++;
    if (ev === "leave") holding--;
    peak = Math.max(peak, holding);
  }
  expect(peak).toBe(1);
  // The race really happened: the folder was removed while the holders were still at work.
  const evs = lines.map((l) => l.ev);
  const firstPrune = evs.indexOf("pruned");
  expect(firstPrune).toBeGreaterThan(-1);
  expect(evs.slice(firstPrune).includes("enter")).toBe(true);
}, 60_000);
