import { join } from "node:path";
import { pruneIdlePool } from "../sys/slots.ts";
import { BUCKET_TABLE } from "./buckets.ts";
import { bucketsOnDisk } from "./status.ts";

/** A pool folder untouched this long, with no holder and no waiter, is removed. */
const POOL_IDLE_MS = 60 * 60_000;

/**
 * Every distinct model name gets its own pool folder, and nothing else ever removed
 * them: fuzzing left dozens in `dl status`. Folders of the documented buckets stay (they
 * are listed anyway); the others go once idle. Returns the buckets removed.
 */
export function pruneIdlePools(slotsDir: string, idleMs = POOL_IDLE_MS): string[] {
  const table = new Set(BUCKET_TABLE.map((e) => e.prefix));
  const removed: string[] = [];
  for (const bucket of bucketsOnDisk(slotsDir)) {
    if (table.has(bucket)) continue;
    try {
      if (pruneIdlePool(join(slotsDir, bucket), idleMs)) removed.push(bucket);
    } catch {
      // A folder we cannot inspect is left for the next run.
    }
  }
  return removed;
}
