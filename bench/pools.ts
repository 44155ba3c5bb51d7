/**
 * bench/pools — what a dispatch pays for its cross-process slot, beside the bare cost of
 * the system calls underneath, measured in the same run (compare ratios: this machine is
 * shared and noisy).
 *
 *   bun bench/pools.ts [iterations=20000]
 *
 * - baseline: open + flock(LOCK_EX|LOCK_NB) + close of one file (no unlock call: close drops it)
 * - SlotPool.tryAcquire + release on a free 6-slot pool (writes and clears the holder record)
 * - Dispatcher.acquire + release, uncontended (bucket lookup, lease wrapper)
 * - tryAcquire on a 6-slot pool with 5 slots held (scans past busy slots)
 * - a full failover walk when every pool is busy, failover and queue grace 0:
 *   glm-coding-plan-think → qwen-3-8-max → deepseek-v4-flash → origin, ending "busy"
 */
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFailoverChains } from "../src/dispatch/failover.ts";
import { createDispatcher, type DispatchLease } from "../src/dispatch/pools.ts";
import { isDlError } from "../src/errors.ts";
import { flockFd } from "../src/sys/flock.ts";
import { SlotPool } from "../src/sys/slots.ts";

const N = Number(process.argv[2] ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), "dl-bench-pools-"));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median µs per call of fn over n calls (after a warm-up of n/10). */
async function measure(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.max(10, n / 10); i++) await fn();
  const t: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const a = Bun.nanoseconds();
    await fn();
    t[i] = (Bun.nanoseconds() - a) / 1000;
  }
  return median(t);
}

const rows: [string, number][] = [];
try {
  const bare = join(dir, "bare.lock");
  rows.push([
    "baseline: open+flock+close of one file",
    await measure(N, () => {
      const fd = openSync(bare, constants.O_RDWR | constants.O_CREAT, 0o600);
      if (flockFd(fd, 2 | 4) !== 0) throw new Error("baseline lock failed");
      closeSync(fd);
    }),
  ]);

  const pool = new SlotPool({ dir: join(dir, "free"), size: 6 });
  rows.push([
    "SlotPool.tryAcquire + release (free pool)",
    await measure(N, () => {
      const l = pool.tryAcquire({ label: "bench" });
      if (!l) throw new Error("pool unexpectedly full");
      l.release();
    }),
  ]);

  const settings = {
    slotsDir: join(dir, "slots"),
    sizing: { defaultSize: 6, overrides: {} },
    queueGraceS: 0,
    failoverGraceS: 0,
    chains: parseFailoverChains(undefined),
  };
  const d = createDispatcher(settings);
  rows.push([
    "Dispatcher.acquire + release (uncontended)",
    await measure(N, async () => {
      const l = await d.acquire("glm-coding-plan-think");
      l.release();
    }),
  ]);

  const nearly = new SlotPool({ dir: join(dir, "nearly"), size: 6 });
  const five = Array.from({ length: 5 }, () => nearly.tryAcquire({ label: "filler" })!);
  rows.push([
    "tryAcquire + release, 5 of 6 slots held",
    await measure(N, () => {
      const l = nearly.tryAcquire({ label: "bench" });
      if (!l) throw new Error("no free slot");
      l.release();
    }),
  ]);
  for (const l of five) l.release();

  // Fill every pool of the chain, then time a dispatch that walks it and gives up.
  const held: DispatchLease[] = [];
  for (const m of ["glm-coding-plan-think", "qwen-3-8-max", "deepseek-v4-flash"]) {
    for (let i = 0; i < 6; i++) held.push(await d.acquire(m));
  }
  rows.push([
    "full failover walk, all busy, grace 0 (→ busy)",
    await measure(Math.max(100, N / 4), async () => {
      try {
        await d.acquire("glm-coding-plan-think");
        throw new Error("a slot was free");
      } catch (e) {
        if (!isDlError(e, "busy")) throw e;
      }
    }),
  ]);
  for (const l of held) l.release();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const base = rows[0]![1];
console.log(
  `bench/pools: ${N} iterations, median µs per operation (Bun ${Bun.version}, ${process.platform}/${process.arch})`,
);
for (const [name, us] of rows) {
  console.log(`  ${name.padEnd(48)} ${us.toFixed(1).padStart(8)} µs   ${(us / base).toFixed(1).padStart(6)}× baseline`);
}
