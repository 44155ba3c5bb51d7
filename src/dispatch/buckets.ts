/**
 * Which pool a model draws from, and how big that pool is.
 *
 * A flat-rate plan limits concurrent requests per plan, not per alias, so variants of one
 * model (`-think`, `-max`, `-flash-max` …) share a bucket: the longest matching prefix of
 * the table wins, so a specific entry beats a family one.
 *
 * A model no entry covers gets a bucket of its own, named after the model (lower-cased,
 * any character outside `a-z 0-9 . _ -` turned into `_`), sized DELEGATE_CONCURRENCY_DEFAULT.
 * "Each model gets a pool": two unrelated aliases never throttle each other. Two aliases
 * that differ only in characters the file name cannot carry (`a/b`, `a_b`) share a pool,
 * which can only lower concurrency, never raise it.
 */

export type BucketEntry = { readonly prefix: string; readonly size: number };

/** The reference's table. Sizes are defaults; DELEGATE_CONCURRENCY_<BUCKET> overrides. */
export const BUCKET_TABLE: readonly BucketEntry[] = [
  { prefix: "deepseek-v4-flash", size: 6 },
  { prefix: "qwen-3-8-max", size: 6 },
  { prefix: "glm-coding-plan", size: 6 },
  { prefix: "ornith", size: 6 },
  { prefix: "local-", size: 2 },
];

export type PoolSizing = {
  /** Size of a bucket no table entry or override names (DELEGATE_CONCURRENCY_DEFAULT). */
  defaultSize: number;
  /** Overrides keyed as config parses them: bucket upper-cased, `-` → `_` (see envKeyFor). */
  overrides: Readonly<Record<string, number>>;
};

const MAX_NAME = 100;

/** The table entry covering `model`, if any (longest prefix, case-insensitive). */
function tableEntryFor(model: string, table: readonly BucketEntry[] = BUCKET_TABLE): BucketEntry | undefined {
  const m = model.toLowerCase();
  let best: BucketEntry | undefined;
  for (const e of table) {
    if (m.startsWith(e.prefix) && (!best || e.prefix.length > best.prefix.length)) best = e;
  }
  return best;
}

/** A model name as a folder name: no separators, no `.`/`..`, bounded length. */
export function modelBucketName(model: string): string {
  let n = model
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, "_");
  if (n.length > MAX_NAME) n = n.slice(0, MAX_NAME);
  // A leading dot would hide the folder or, alone, name the parent: never a pool.
  if (n === "" || n.startsWith(".")) n = `_${n}`;
  return n;
}

export function bucketFor(model: string, table: readonly BucketEntry[] = BUCKET_TABLE): string {
  return tableEntryFor(model, table)?.prefix ?? modelBucketName(model);
}

/**
 * The suffix of DELEGATE_CONCURRENCY_<BUCKET>: upper-cased, `-` (and anything else an
 * environment name cannot hold) → `_`. So `glm-coding-plan` → GLM_CODING_PLAN and
 * `local-` → LOCAL_.
 */
export function envKeyFor(bucket: string): string {
  return bucket.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
}

/**
 * Size of a bucket. A bucket ending in `-` (`local-`) also accepts the key without the
 * trailing `_` (DELEGATE_CONCURRENCY_LOCAL), since nobody guesses a variable ending in `_`;
 * the exact key wins if both are set.
 */
export function bucketSize(bucket: string, sizing: PoolSizing, table: readonly BucketEntry[] = BUCKET_TABLE): number {
  const key = envKeyFor(bucket);
  const exact = sizing.overrides[key];
  if (exact !== undefined) return exact;
  if (key.endsWith("_")) {
    const trimmed = sizing.overrides[key.replace(/_+$/, "")];
    if (trimmed !== undefined) return trimmed;
  }
  return table.find((e) => e.prefix === bucket)?.size ?? sizing.defaultSize;
}
