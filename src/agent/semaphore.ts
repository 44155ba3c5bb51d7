import { DlError } from "../errors.ts";

/**
 * A counting semaphore for work inside this process (concurrent run_bash commands).
 * Cross-process caps are flock slots in src/sys; this one only keeps one server from
 * forking more shells at once than the machine can take.
 */
/** A held semaphore slot: call it, or dispose it, to free the slot. */
type SemaphoreSlot = (() => void) & Disposable;

export class Semaphore {
  private active = 0;
  private readonly waiters: (() => void)[] = [];
  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1)
      throw new DlError("bad_config", `a concurrency cap must be an integer >= 1, got ${max}`);
  }

  get inUse(): number {
    return this.active;
  }

  /**
   * Resolves once a slot is free with its release: a function (idempotent) that is also
   * Disposable, so `using slot = await s.acquire(signal)` frees it when the scope ends.
   * Rejects if `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<SemaphoreSlot> {
    if (signal?.aborted)
      return Promise.reject(new DlError("cancelled", "cancelled while waiting for a free command slot"));
    const grant = (): SemaphoreSlot => {
      this.active++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        this.active--;
        this.waiters.shift()?.();
      };
      return Object.assign(release, { [Symbol.dispose]: release });
    };
    if (this.active < this.max) return Promise.resolve(grant());
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(grant());
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(wake);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new DlError("cancelled", "cancelled while waiting for a free command slot"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(wake);
    });
  }
}

const shared = new Map<number, Semaphore>();

/** One semaphore per cap value for the whole process, so every agent run shares it. */
export function sharedSemaphore(max: number): Semaphore {
  let s = shared.get(max);
  if (!s) {
    s = new Semaphore(max);
    shared.set(max, s);
  }
  return s;
}
