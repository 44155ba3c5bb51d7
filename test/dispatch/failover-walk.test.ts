/**
 * Failover through real pools: a full pool walks its chain in order, each fallback
 * waiting only the failover grace; the origin waits its full grace last; local models
 * wait or fail but never leave; cancel stops a wait.
 */
import { afterEach, expect, test } from "bun:test";
import { parseFailoverChains } from "../../src/dispatch/failover.ts";
import { createDispatcher, type Dispatcher, type DispatchLease } from "../../src/dispatch/pools.ts";
import { poolStatus } from "../../src/dispatch/status.ts";
import { isDlError } from "../../src/errors.ts";
import { startWorker, stopWorkers, testSettings, until, writeSettings } from "./util.ts";

afterEach(() => stopWorkers());

const sizing = { defaultSize: 6, overrides: { GLM_CODING_PLAN: 1, QWEN_3_8_MAX: 1, DEEPSEEK_V4_FLASH: 1, LOCAL: 1 } };
const held: DispatchLease[] = [];
afterEach(() => {
  for (const l of held.splice(0)) l.release();
});

async function fill(d: Dispatcher, model: string): Promise<DispatchLease> {
  const l = await d.acquire(model, { task: "filler" });
  expect(l.model_used).toBe(model);
  held.push(l);
  return l;
}

test("a full pool walks the chain in order and the result names failed_over_from", async () => {
  const settings = testSettings({
    sizing,
    chains: parseFailoverChains(undefined),
    queueGraceS: 0.1,
    failoverGraceS: 0.05,
  });
  const d = createDispatcher(settings);
  // Another process fills the origin's pool.
  const holder = startWorker(["hold", writeSettings(settings), "glm-coding-plan", "1"]);
  await until(() => holder.lines.some((l) => l.startsWith('{"held"')), "the holder process to fill glm-coding-plan");

  // First fallback free: it is taken.
  const a = await d.acquire("glm-coding-plan-think");
  expect(a).toMatchObject({
    model_used: "qwen-3-8-max",
    failed_over_from: "glm-coding-plan-think",
    bucket: "qwen-3-8-max",
  });
  held.push(a);

  // First fallback full too: the second one, after the first waited its grace.
  const waits: string[] = [];
  const b = await d.acquire("glm-coding-plan-think", { onWaiting: (m) => waits.push(m) });
  expect(b).toMatchObject({ model_used: "deepseek-v4-flash", failed_over_from: "glm-coding-plan-think" });
  held.push(b);
  expect(waits[0]).toContain("waiting for a slot for qwen-3-8-max");
  expect(waits.some((w) => w.includes("deepseek"))).toBe(false); // deepseek was free: no wait

  const status = poolStatus(settings);
  const byBucket = Object.fromEntries(status.map((p) => [p.bucket, p]));
  expect(byBucket["deepseek-v4-flash"]!.holders).toEqual([
    expect.objectContaining({ model: "deepseek-v4-flash", requested: "glm-coding-plan-think", pid: process.pid }),
  ]);
  expect(byBucket["glm-coding-plan"]!.holders).toEqual([
    expect.objectContaining({ model: "glm-coding-plan", pid: holder.proc.pid }),
  ]);

  // Everything full: fallbacks in order, then the origin for its full grace, then busy.
  const all: string[] = [];
  const t0 = performance.now();
  const err = await d.acquire("glm-coding-plan-think", { onWaiting: (m) => all.push(m) }).catch((e: unknown) => e);
  const took = performance.now() - t0;
  expect(isDlError(err, "busy")).toBe(true);
  expect((err as Error).message).toContain("fallbacks qwen-3-8-max, deepseek-v4-flash had no free slot");
  expect((err as Error).message).toContain("DELEGATE_CONCURRENCY_GLM_CODING_PLAN");
  const seq = all.map((m) => /for a slot for (\S+):/.exec(m)![1]);
  const firsts = seq.filter((m, i) => m !== seq[i - 1]);
  expect(firsts).toEqual(["qwen-3-8-max", "deepseek-v4-flash", "glm-coding-plan-think"]);
  // 2 × 50 ms failover grace + 100 ms queue grace, give or take polling.
  expect(took).toBeGreaterThanOrEqual(190);
  expect(took).toBeLessThan(2000);
});

test("while waiting last, the origin gets its own slot back: no failover is claimed", async () => {
  const settings = testSettings({ sizing, chains: parseFailoverChains(undefined), queueGraceS: 10, failoverGraceS: 0 });
  const d = createDispatcher(settings);
  const origin = await fill(d, "deepseek-v4-flash");
  await fill(d, "glm-coding-plan-think");
  await fill(d, "qwen-3-8-max");
  let got: DispatchLease | undefined;
  const p = d.acquire("deepseek-v4-flash").then((l) => (got = l));
  await until(
    () => poolStatus(settings).find((s) => s.bucket === "deepseek-v4-flash")!.waiting === 1,
    "the dispatch to wait on its own pool",
  );
  origin.release();
  await p;
  held.push(got!);
  expect(got!.model_used).toBe("deepseek-v4-flash");
  expect(got!.failed_over_from).toBeUndefined();
});

test("a local model whose table entry points outward waits or fails, but never leaves", async () => {
  const chains = parseFailoverChains('{"local-qwen-3-6-35b":["deepseek-v4-flash","qwen-3-8-max"]}');
  const settings = testSettings({ sizing, chains, queueGraceS: 0.1, failoverGraceS: 0 });
  const d = createDispatcher(settings);
  expect(d.chainOf("local-qwen-3-6-35b")).toEqual([]);
  const first = await fill(d, "local-qwen-3-6-35b");

  const waits: string[] = [];
  const err = await d.acquire("local-qwen-3-6-35b", { onWaiting: (m) => waits.push(m) }).catch((e: unknown) => e);
  expect(isDlError(err, "busy")).toBe(true);
  expect(waits.every((w) => w.includes("for local-qwen-3-6-35b"))).toBe(true);
  const busy = poolStatus(settings).filter((p) => p.in_use > 0);
  expect(busy.map((p) => p.bucket)).toEqual(["local-"]); // nothing was taken elsewhere

  // And it waits: a freed slot goes to it.
  const d2 = createDispatcher({ ...settings, queueGraceS: 10 });
  const p = d2.acquire("local-qwen-3-6-35b");
  await until(
    () => poolStatus(settings).find((s) => s.bucket === "local-")!.waiting === 1,
    "the local dispatch to wait",
  );
  first.release();
  const l = await p;
  held.push(l);
  expect(l).toMatchObject({ model_used: "local-qwen-3-6-35b", bucket: "local-" });
  expect(l.failed_over_from).toBeUndefined();
});

test("cancel ends a wait with DlError cancelled and leaves no waiter behind", async () => {
  const settings = testSettings({ sizing, queueGraceS: 60 });
  const d = createDispatcher(settings);
  await fill(d, "local-x");
  const ac = new AbortController();
  const p = d.acquire("local-x", { signal: ac.signal }).catch((e: unknown) => e);
  await until(() => poolStatus(settings).find((s) => s.bucket === "local-")!.waiting === 1, "the dispatch to wait");
  ac.abort();
  const err = await p;
  expect(isDlError(err, "cancelled")).toBe(true);
  expect(poolStatus(settings).find((s) => s.bucket === "local-")).toMatchObject({ in_use: 1, waiting: 0 });
  // Already cancelled: refused before touching a pool.
  expect(isDlError(await d.acquire("qwen-3-8-max", { signal: ac.signal }).catch((e: unknown) => e), "cancelled")).toBe(
    true,
  );
});

test("status lists every table bucket and per-model buckets once used", async () => {
  const settings = testSettings({ sizing: { defaultSize: 3, overrides: { LOCAL: 1 } } });
  const d = createDispatcher(settings);
  expect(poolStatus(settings).map((p) => [p.bucket, p.size, p.in_use])).toEqual([
    ["deepseek-v4-flash", 6, 0],
    ["glm-coding-plan", 6, 0],
    ["local-", 1, 0],
    ["ornith", 6, 0],
    ["qwen-3-8-max", 6, 0],
  ]);
  const l = await fill(d, "mimo-v2");
  const s = poolStatus(settings).find((p) => p.bucket === "mimo-v2")!;
  expect(s).toMatchObject({ size: 3, in_use: 1, waiting: 0 });
  expect(s.holders[0]).toMatchObject({ pid: process.pid, model: "mimo-v2", task: "filler" });
  expect(Date.parse(s.holders[0]!.since)).toBeGreaterThan(Date.now() - 60_000);
  l.release();
});

test("a lease held with `using` releases the slot however the run ends", async () => {
  const settings = testSettings({ sizing, queueGraceS: 0 });
  const d = createDispatcher(settings);
  const inUse = () => poolStatus(settings).find((s) => s.bucket === "local-")!.in_use;
  const run = async (fn: (model: string) => Promise<string>) => {
    using l = await d.acquire("local-a");
    return await fn(l.model_used);
  };
  const out = await run(async (model) => {
    expect(inUse()).toBe(1);
    return model;
  });
  expect(out).toBe("local-a");
  expect(inUse()).toBe(0);
  await expect(run(async () => Promise.reject(new Error("run failed")))).rejects.toThrow("run failed");
  expect(inUse()).toBe(0);
});

test("failover: false waits for the model's own pool only", async () => {
  const settings = testSettings({
    sizing,
    chains: parseFailoverChains(undefined),
    queueGraceS: 0.05,
    failoverGraceS: 0,
  });
  const d = createDispatcher(settings);
  await fill(d, "glm-coding-plan-think");
  const err = await d.acquire("glm-coding-plan-think", { failover: false }).catch((e: unknown) => e);
  expect(isDlError(err, "busy")).toBe(true);
  expect(
    poolStatus(settings)
      .filter((p) => p.in_use > 0)
      .map((p) => p.bucket),
  ).toEqual(["glm-coding-plan"]);
  // The same call with failover on finds qwen free.
  const l = await d.acquire("glm-coding-plan-think");
  held.push(l);
  expect(l.model_used).toBe("qwen-3-8-max");
});
