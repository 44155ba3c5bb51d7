/**
 * Pools across real processes: 4 workers share one 6-slot model against one fake model
 * server that counts concurrent requests; a worker killed with SIGKILL gives its slots back.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDispatcher } from "../../src/dispatch/pools.ts";
import { poolStatus } from "../../src/dispatch/status.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { startWorker, stderrOf, stopWorkers, testSettings, until, writeSettings } from "./util.ts";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.stop());
afterEach(() => stopWorkers());

test("4 processes, 20 dispatches at one 6-slot model: the backend never sees more than 6 at once", async () => {
  const MODEL = "glm-coding-plan-think";
  fake.reset();
  fake.always(reply.text("ok", { delayMs: 120 }));
  // No chains: every dispatch must wait for the model's own pool.
  const settings = testSettings({ queueGraceS: 30, chains: {} });
  const file = writeSettings(settings);
  const go = join(settings.slotsDir, "..", `go-${process.pid}-${Date.now()}`);
  const workers = [0, 1, 2, 3].map(() => startWorker(["run", file, MODEL, "5", fake.url, go]));
  await until(() => workers.every((w) => w.lines.includes("ready")), "4 workers ready", 15_000);
  writeFileSync(go, "go");
  const codes = await Promise.all(workers.map((w) => w.exited));
  if (codes.some((c) => c !== 0))
    throw new Error(`a worker failed: ${await stderrOf(workers[codes.findIndex((c) => c !== 0)]!)}`);

  const done = workers.flatMap((w) =>
    w.lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { model_used: string; slot: number }),
  );
  const peak = fake.peak(MODEL);
  console.log(
    `[pools] 4 processes x 5 dispatches at ${MODEL} (6 slots): backend peak concurrency = ${peak}, requests = ${fake.requests.length}`,
  );
  expect(done).toHaveLength(20);
  expect(fake.requests.filter((r) => r.model === MODEL)).toHaveLength(20);
  expect(done.every((d) => d.model_used === MODEL && d.slot >= 0 && d.slot < 6)).toBe(true);
  expect(peak).toBeLessThanOrEqual(6);
  // 20 calls of 120 ms from 4 processes started together do overlap: the cap was exercised.
  expect(peak).toBeGreaterThan(1);
  expect(poolStatus(settings).find((p) => p.bucket === "glm-coding-plan")).toMatchObject({
    size: 6,
    in_use: 0,
    waiting: 0,
  });
}, 30_000);

test("SIGKILL of a process holding every slot gives the slots back to a waiting dispatch", async () => {
  const MODEL = "qwen-3-8-max-think";
  const settings = testSettings({ queueGraceS: 30, chains: {} });
  const file = writeSettings(settings);
  const holder = startWorker(["hold", file, MODEL, "6"]);
  await until(() => holder.lines.some((l) => l.startsWith('{"held"')), "the holder to take 6 slots", 15_000);

  const before = poolStatus(settings).find((p) => p.bucket === "qwen-3-8-max")!;
  expect(before.in_use).toBe(6);
  expect(before.holders.every((h) => h.pid === holder.proc.pid && h.model === MODEL)).toBe(true);

  const d = createDispatcher(settings);
  const waits: string[] = [];
  let lease: Awaited<ReturnType<typeof d.acquire>> | undefined;
  const pending = d.acquire(MODEL, { onWaiting: (m) => waits.push(m) }).then((l) => (lease = l));
  await until(
    () => poolStatus(settings).find((p) => p.bucket === "qwen-3-8-max")!.waiting === 1,
    "the dispatch to show as waiting",
  );
  expect(lease).toBeUndefined();

  holder.proc.kill("SIGKILL");
  await pending;
  // The dispatch gets the first slot the dying holder lets go of; the kernel closes its
  // other five lock files as it finishes exiting, which under load is a moment later.
  await holder.exited;
  expect(lease!.model_used).toBe(MODEL);
  expect(lease!.failed_over_from).toBeUndefined();
  expect(waits[0]).toContain("all 6 slots of pool qwen-3-8-max are busy");
  const after = poolStatus(settings).find((p) => p.bucket === "qwen-3-8-max")!;
  expect(after).toMatchObject({ in_use: 1, waiting: 0 });
  expect(after.holders).toEqual([expect.objectContaining({ pid: process.pid, model: MODEL })]);
  lease!.release();
  expect(poolStatus(settings).find((p) => p.bucket === "qwen-3-8-max")!.in_use).toBe(0);
}, 30_000);
