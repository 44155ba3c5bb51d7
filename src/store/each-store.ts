import { describeError } from "../errors.ts";
import type { JobStateDir } from "../sys/paths.ts";
import { storeAccess } from "./access.ts";
import { JobStore } from "./jobs.ts";

/**
 * What one known store gave: `fn`'s answer, why it could not be opened or read (a
 * command names it, never skips it), or that it was never created (nothing to read).
 */
export type StoreVisit<T> = { source: JobStateDir } & ({ value: T } | { error: string } | { absent: true });

type Visitor<T> = (store: JobStore, source: JobStateDir) => T;

/**
 * The one loop over the known job stores (`dl jobs/show/logs/cancel`, `dl status`,
 * `dl reap`, `dl usage`): each store that exists is opened (read-only when asked), handed
 * to `fn` and closed, one at a time, even when `fn` throws. An `fn` that returns a
 * promise keeps its store open until it settles, and the answer is a promise then.
 */
export function eachStore<T>(
  sources: readonly JobStateDir[],
  fn: Visitor<Promise<T>>,
  o?: { readonly?: boolean },
): Promise<StoreVisit<T>[]>;
export function eachStore<T>(
  sources: readonly JobStateDir[],
  fn: Visitor<T>,
  o?: { readonly?: boolean },
): StoreVisit<T>[];
export function eachStore<T>(
  sources: readonly JobStateDir[],
  fn: Visitor<T | Promise<T>>,
  o: { readonly?: boolean } = {},
): StoreVisit<T>[] | Promise<StoreVisit<T>[]> {
  const out: StoreVisit<T>[] = [];
  const from = (i: number): StoreVisit<T>[] | Promise<StoreVisit<T>[]> => {
    for (; i < sources.length; i++) {
      const pending = visit(sources[i]!, fn, o.readonly === true);
      if (pending instanceof Promise) {
        const next = i + 1;
        return pending.then((v) => {
          out.push(v);
          return from(next);
        });
      }
      out.push(pending);
    }
    return out;
  };
  return from(0);
}

/** One store: opened, read by `fn`, closed once `fn` (or the promise it returned) is done. */
function visit<T>(
  source: JobStateDir,
  fn: Visitor<T | Promise<T>>,
  readonly: boolean,
): StoreVisit<T> | Promise<StoreVisit<T>> {
  // One this user may not look into is not an empty one: it is named, never skipped.
  const access = storeAccess(source.stateDir);
  if (access.state === "absent") return { source, absent: true };
  if (access.state === "unreadable") return { source, error: access.reason };
  let store: JobStore | undefined;
  const failed = (e: unknown): StoreVisit<T> => ({ source, error: describeError(e) });
  try {
    store = JobStore.open(source.stateDir, { readonly, provider: source.provider });
    const v = fn(store, source);
    if (!(v instanceof Promise)) return { source, value: v };
    const open = store;
    store = undefined;
    return v.then((value): StoreVisit<T> => ({ source, value }), failed).finally(() => open.close());
  } catch (e) {
    return failed(e);
  } finally {
    store?.close();
  }
}
