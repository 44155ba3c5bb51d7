/**
 * Pool status for `dl status`: every bucket of the table plus every bucket folder that
 * exists under the pool root (per-model buckets appear once something used them).
 *
 * Read-only apart from what sys/slots.ts does while probing (it clears a dead holder's
 * record and removes a dead waiter's marker). A bucket folder that does not exist yet is
 * reported empty without creating it.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SlotPool } from "../sys/slots.ts";
import { BUCKET_TABLE, bucketSize, modelBucketName, type PoolSizing } from "./buckets.ts";

type PoolHolder = { pid: number; model: string; since: string; requested?: string; task?: string };

export type PoolStatus = {
  bucket: string;
  size: number;
  /** Slots whose lock is held right now (the lock is the truth; records are display). */
  in_use: number;
  /** Holders whose record could be read (a record may lag its lock by a moment). */
  holders: PoolHolder[];
  /** Dispatches of any process waiting for this pool. */
  waiting: number;
};

export type PoolStatusOptions = { slotsDir: string; sizing: PoolSizing };

/** Bucket folders on disk that a pool could have made (skips stray files and foreign names). */
export function bucketsOnDisk(slotsDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(slotsDir);
  } catch {
    return [];
  }
  return names.filter((n) => {
    if (n !== modelBucketName(n) && !BUCKET_TABLE.some((e) => e.prefix === n)) return false;
    try {
      return statSync(join(slotsDir, n)).isDirectory();
    } catch {
      return false;
    }
  });
}

export function poolStatus(opts: PoolStatusOptions): PoolStatus[] {
  const names = new Set<string>(BUCKET_TABLE.map((e) => e.prefix));
  for (const n of bucketsOnDisk(opts.slotsDir)) names.add(n);
  const out: PoolStatus[] = [];
  for (const bucket of [...names].sort()) {
    const size = bucketSize(bucket, opts.sizing);
    const dir = join(opts.slotsDir, bucket);
    if (!existsSync(dir)) {
      out.push({ bucket, size, in_use: 0, holders: [], waiting: 0 });
      continue;
    }
    const pool = new SlotPool({ dir, size });
    const states = pool.holders();
    const holders: PoolHolder[] = [];
    for (const s of states) {
      if (!s.held || !s.record) continue;
      const r = s.record;
      const h: PoolHolder = { pid: r.pid, model: typeof r.model === "string" ? r.model : r.label, since: r.since };
      if (typeof r.requested === "string") h.requested = r.requested;
      if (typeof r.task === "string") h.task = r.task;
      holders.push(h);
    }
    out.push({ bucket, size, in_use: states.filter((s) => s.held).length, holders, waiting: pool.waiting() });
  }
  return out;
}
