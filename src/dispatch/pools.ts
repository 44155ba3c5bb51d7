/**
 * Dispatch pools: every model run (single, batch, provider) holds one slot of its
 * bucket's pool for the whole delegated run, across every dl process on the machine.
 *
 *   const d = createDispatcher(dispatchSettingsFromConfig(config));
 *   using lease = await d.acquire(model, { signal, onWaiting: (msg) => progress(msg) });
 *   run the agent with lease.model_used (the slot is freed when the scope ends)
 *
 * Order of a full pool: the origin is tried at once; then each fallback of its guarded
 * chain waits up to the failover grace for its own slot (the origin is tried again, for
 * free, before each fallback); last, the origin waits its full queue grace. The lock files
 * live in `<slotsDir>/<bucket>/` (sys/slots.ts), so a crashed process frees its slot.
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { DlError, isDlError } from "../errors.ts";
import { type SlotHolder, type SlotLease, SlotPool } from "../sys/slots.ts";
import { bucketFor, bucketSize, type PoolSizing } from "./buckets.ts";
import { chainFor, type FailoverChains, parseFailoverChains } from "./failover.ts";

export type DispatchSettings = {
  /** Pool root: one folder per bucket under it. */
  slotsDir: string;
  sizing: PoolSizing;
  /** How long the requested model waits for its own slot, in seconds (fractions allowed). */
  queueGraceS: number;
  /** How long each fallback waits for its slot, in seconds; 0 = take it only if free now. */
  failoverGraceS: number;
  chains: FailoverChains;
  /** How often onWaiting repeats while a wait lasts (default 5000 ms). */
  progressEveryMs?: number;
  /** Longest pause between lock attempts (default 50 ms). */
  maxPollMs?: number;
};

/** The config fields this module needs; DELEGATE_FAILOVER_CHAINS is parsed (and may throw bad_config) here. */
export function dispatchSettingsFromConfig(c: Config): DispatchSettings {
  return {
    slotsDir: c.paths.slotsDir,
    sizing: { defaultSize: c.pools.defaultSize, overrides: c.pools.bucketOverrides },
    queueGraceS: c.pools.queueGraceS,
    failoverGraceS: c.pools.failoverGraceS,
    chains: parseFailoverChains(c.pools.failoverChains),
  };
}

/** A held pool slot for one delegated run. Disposable: `using lease = await d.acquire(…)`. */
export type DispatchLease = Disposable & {
  /** The model to call: the requested one, or the fallback that had room. */
  model_used: string;
  /** Set only when the run failed over: the model that was asked for. */
  failed_over_from?: string;
  bucket: string;
  slot: number;
  /** Time spent waiting for the slot. */
  waited_ms: number;
  readonly released: boolean;
  /** Frees the slot. Idempotent; disposing the lease calls it. */
  release(): void;
};

export type AcquireDispatchOptions = {
  signal?: AbortSignal;
  /** A line for people while the dispatch waits (MCP progress, `dl run` stderr). */
  onWaiting?: (message: string) => void;
  /** What the slot is for (agent or task name), shown by `dl status`. */
  task?: string;
  /** false: wait for the model's own pool only (explicit provider URLs). Default true. */
  failover?: boolean;
};

const fmtS = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

export class Dispatcher {
  private readonly pools = new Map<string, SlotPool>();

  constructor(readonly settings: DispatchSettings) {
    for (const [name, v] of [
      ["queue grace", settings.queueGraceS],
      ["failover grace", settings.failoverGraceS],
    ] as const) {
      if (!Number.isFinite(v) || v < 0)
        throw new DlError("bad_config", `the ${name} must be a number of seconds >= 0 (got ${v})`);
    }
  }

  bucketOf(model: string): string {
    return bucketFor(model);
  }

  sizeOf(bucket: string): number {
    return bucketSize(bucket, this.settings.sizing);
  }

  /** The pool of a bucket (its folder is created on first use). */
  pool(bucket: string): SlotPool {
    let p = this.pools.get(bucket);
    if (!p) {
      p = new SlotPool({ dir: join(this.settings.slotsDir, bucket), size: this.sizeOf(bucket) });
      this.pools.set(bucket, p);
    }
    return p;
  }

  /** The guarded failover chain of a model (empty for pinned models). */
  chainOf(model: string): string[] {
    return chainFor(model, this.settings.chains, (m) => this.bucketOf(m));
  }

  async acquire(model: string, opts: AcquireDispatchOptions = {}): Promise<DispatchLease> {
    const requested = model.trim();
    if (requested === "") throw new DlError("bad_input", "no model given: name the model alias to dispatch to");
    const started = performance.now();
    const checkCancel = () => {
      if (opts.signal?.aborted) throw new DlError("cancelled", `cancelled while waiting for a slot for ${requested}`);
    };
    checkCancel();
    const grant = (m: string, lease: SlotLease): DispatchLease =>
      wrap(m, requested, this.bucketOf(m), lease, performance.now() - started);
    const holder = (m: string): SlotHolder => {
      const h: SlotHolder = { label: m, model: m };
      if (m !== requested) h.requested = requested;
      if (opts.task) h.task = opts.task.slice(0, 120);
      return h;
    };

    const origin = this.pool(this.bucketOf(requested));
    const now = origin.tryAcquire(holder(requested));
    if (now) return grant(requested, now);

    const chain = opts.failover === false ? [] : this.chainOf(requested);
    if (chain.length > 0) {
      // `dl status` probes a free slot by locking it for an instant; a pool that looks
      // full only for that instant must not send the run to another provider.
      await Bun.sleep(2);
      checkCancel();
    }
    for (const fallback of chain) {
      checkCancel();
      const again = origin.tryAcquire(holder(requested));
      if (again) return grant(requested, again);
      const lease = await this.waitFor(
        fallback,
        this.settings.failoverGraceS * 1000,
        holder(fallback),
        opts,
        `${requested} is full; trying ${fallback}`,
      );
      if (lease) return grant(fallback, lease);
    }

    const graceMs = this.settings.queueGraceS * 1000;
    const lease = await this.waitFor(
      requested,
      graceMs,
      holder(requested),
      opts,
      chain.length > 0 ? `fallbacks ${chain.join(", ")} are full too` : "",
    );
    if (lease) return grant(requested, lease);
    throw poolBusy(requested, this.bucketOf(requested), origin.size, graceMs, chain);
  }

  /** Waits up to `ms` for a slot of `model`'s pool; null when the time runs out. */
  private async waitFor(
    model: string,
    ms: number,
    holder: SlotHolder,
    opts: AcquireDispatchOptions,
    why: string,
  ): Promise<SlotLease | null> {
    const bucket = this.bucketOf(model);
    const pool = this.pool(bucket);
    // Free now: take it without announcing a wait that never happened.
    const now = pool.tryAcquire(holder);
    if (now || ms <= 0) return now;
    const say = (elapsed: number) =>
      opts.onWaiting?.(
        `waiting for a slot for ${model}: all ${pool.size} slots of pool ${bucket} are busy` +
          (why ? ` (${why})` : "") +
          ` — ${fmtS(elapsed)} of up to ${fmtS(ms)}`,
      );
    const t0 = performance.now();
    say(0);
    const timer = setInterval(() => say(performance.now() - t0), this.settings.progressEveryMs ?? 5000);
    try {
      const acquireOpts: Parameters<SlotPool["acquire"]>[0] = { holder, timeoutMs: ms };
      if (opts.signal) acquireOpts.signal = opts.signal;
      if (this.settings.maxPollMs !== undefined) acquireOpts.maxPollMs = this.settings.maxPollMs;
      return await pool.acquire(acquireOpts);
    } catch (e) {
      if (isDlError(e, "busy")) return null;
      if (isDlError(e, "cancelled"))
        throw new DlError("cancelled", `cancelled while waiting for a slot for ${model}`, { model, bucket });
      throw e;
    } finally {
      clearInterval(timer);
    }
  }
}

function wrap(model: string, requested: string, bucket: string, lease: SlotLease, waitedMs: number): DispatchLease {
  const out: DispatchLease = {
    model_used: model,
    bucket,
    slot: lease.index,
    waited_ms: Math.round(waitedMs),
    get released() {
      return lease.released;
    },
    release: () => lease.release(),
    [Symbol.dispose]: () => lease.release(),
  };
  if (model !== requested) out.failed_over_from = requested;
  return out;
}

export function createDispatcher(settings: DispatchSettings): Dispatcher {
  return new Dispatcher(settings);
}

/** The refusal of a dispatch whose pool (and every fallback) stayed full past its grace. */
function poolBusy(requested: string, bucket: string, size: number, graceMs: number, chain: readonly string[]): DlError {
  const env = `DELEGATE_CONCURRENCY_${bucket.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}`;
  return new DlError(
    "busy",
    `all ${size} slots of pool ${bucket} stayed busy for ${fmtS(graceMs)}` +
      (chain.length > 0 ? ` and fallbacks ${chain.join(", ")} had no free slot` : "") +
      `; ${requested} was not started. Next: retry later, pick another model, or raise ${env} / DELEGATE_QUEUE_GRACE.`,
    { model: requested, bucket, size, tried: [...chain, requested] },
  );
}
