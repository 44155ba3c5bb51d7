import { fstatSync, ftruncateSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DlError, isDlError } from "../errors.ts";
import { readChildFileSync } from "./child-file.ts";
import { type LockHandle, PollPauses, tryLock } from "./flock.ts";
import { privateDir } from "./private-file.ts";
import { redact } from "./redact.ts";

/** A slot record is a few hundred bytes; anything bigger was not written by dl. */
const SLOT_RECORD_MAX_BYTES = 65_536;

/**
 * A cross-process slot pool: `slot-0.lock` … `slot-<size-1>.lock` in one folder, each
 * an exclusive flock. Holding slot i's lock is holding slot i; the JSON record inside
 * the file (who, since when) is for display only. A slot whose lock can be taken is free
 * whatever its file says, so a killed holder frees its slot the instant it dies.
 *
 * Processes that wait hold a lock on `waiting/<pid>-<rand>.lock`, so anyone can count the
 * queue across every process without trusting files a crash left behind.
 *
 * The pool size comes from config and may change between processes: slots at or beyond
 * the current size are ignored (a holder of a dropped slot keeps it until it releases).
 */

export interface SlotHolder {
  /** Who holds it, for people: a model, a job id, a task name. */
  label: string;
  [key: string]: string | number | boolean;
}

interface SlotRecord extends SlotHolder {
  pid: number;
  /** ISO time the slot was taken. */
  since: string;
}

/** A held slot. Disposable: `using lease = await pool.acquire(…)` frees it when the scope ends. */
export interface SlotLease extends Disposable {
  index: number;
  path: string;
  record: SlotRecord;
  readonly released: boolean;
  /** Clears the record and frees the slot. Safe to call more than once. */
  release(): void;
}

export interface SlotState {
  index: number;
  held: boolean;
  /** The holder's record; null for a free slot or one whose record is unreadable. */
  record: SlotRecord | null;
}

export interface AcquireOptions {
  holder: SlotHolder;
  signal?: AbortSignal;
  /** Give up after this long with DlError "busy". Default: wait until the signal aborts. */
  timeoutMs?: number;
  /** Longest pause between attempts. */
  maxPollMs?: number;
}

const WAITING = "waiting";
/** Held shared by every lease and by whoever is taking one; exclusive only by a prune. */
const POOL_GUARD = ".pool.lock";
/** A waiter's file is created under this prefix, locked, then renamed into view. */
const TMP_PREFIX = ".tmp-";
/** An unlocked temp file older than this was left by a crash between create and rename. */
const STALE_TMP_MS = 10_000;

function parseRecord(text: string): SlotRecord | null {
  try {
    const r = JSON.parse(text) as unknown;
    if (
      r &&
      typeof r === "object" &&
      typeof (r as SlotRecord).pid === "number" &&
      typeof (r as SlotRecord).label === "string"
    ) {
      return r as SlotRecord;
    }
  } catch {
    // empty, half-written or foreign: no record
  }
  return null;
}

function writeRecord(fd: number, record: SlotRecord | null): void {
  ftruncateSync(fd, 0);
  if (record) {
    // A label names a model, and a model name can be a pasted key: redacted like every state file.
    const buf = Buffer.from(`${redact(JSON.stringify(record))}\n`);
    writeSync(fd, buf, 0, buf.byteLength, 0);
  }
}

export class SlotPool {
  readonly dir: string;
  readonly size: number;
  private readonly waitDir: string;
  private readonly root: string;

  /** `root`: the state or cache dir the pool's folder lies in (default: the folder holding `slots/`), kept private too. */
  constructor(opts: { dir: string; size: number; root?: string }) {
    if (!Number.isInteger(opts.size) || opts.size < 1) {
      throw new DlError("bad_config", `a slot pool needs a whole number of slots >= 1 (got ${opts.size})`, {
        size: opts.size,
      });
    }
    this.dir = opts.dir;
    this.size = opts.size;
    this.waitDir = join(opts.dir, WAITING);
    this.root = opts.root ?? dirname(dirname(opts.dir));
    this.ensureDir();
  }

  private ensureDir(): void {
    for (let attempt = 1; ; attempt++) {
      try {
        privateDir(this.waitDir, this.root);
        return;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? "unknown";
        // A recursive mkdir makes the folder, then its `waiting` child: a prune that
        // renames the folder away in between leaves the child's parent missing. Make both
        // again; only a folder that keeps vanishing (or any other error) is a real failure.
        if (code === "ENOENT" && attempt < 5) continue;
        // A refusal that names its folder and its fix (another user's: sys/owned.ts) is said as is.
        if (e instanceof DlError) throw e;
        throw this.storageError(code);
      }
    }
  }

  private storageError(code: string): DlError {
    return new DlError("storage", `cannot create slot folder ${this.dir} (${code}): check that it is writable`, {
      dir: this.dir,
      errno: code,
    });
  }

  /** A lock on `path` in this folder, or null if busy. A folder pruned while idle (pruneIdlePool) is made again. */
  private lockIn(path: string, shared = false): LockHandle | null {
    try {
      return tryLock(path, { stillLinked: true, shared });
    } catch (e) {
      if (!isDlError(e, "lock") || e.data.errno !== "ENOENT") throw e;
      this.ensureDir();
      try {
        return tryLock(path, { stillLinked: true, shared });
      } catch (again) {
        // Pruned again in between: busy for now, the caller tries again.
        if (isDlError(again, "lock") && again.data.errno === "ENOENT") return null;
        throw again;
      }
    }
  }

  slotPath(index: number): string {
    return join(this.dir, `slot-${index}.lock`);
  }

  /**
   * Takes any free slot now (starting at a random index to spread holders), or null. The
   * folder's guard is held shared from before the slot is looked up until the lease ends,
   * so pruneIdlePool (which needs it exclusive) never removes a folder in use, nor one a
   * slot file is being created in.
   */
  tryAcquire(holder: SlotHolder): SlotLease | null {
    const guard = this.lockIn(join(this.dir, POOL_GUARD), true);
    if (!guard) return null; // a prune is removing this folder right now: try again
    const start = Math.floor(Math.random() * this.size);
    for (let k = 0; k < this.size; k++) {
      const index = (start + k) % this.size;
      const h = this.lockIn(this.slotPath(index));
      if (h) return this.lease(index, h, holder, guard);
    }
    guard.release();
    return null;
  }

  private lease(index: number, h: LockHandle, holder: SlotHolder, guard: LockHandle): SlotLease {
    const record: SlotRecord = { ...holder, pid: process.pid, since: new Date().toISOString() };
    try {
      writeRecord(h.fd, record);
    } catch {
      // The record is only for display; the lock alone makes the slot ours.
    }
    const release = () => {
      if (h.released) return;
      try {
        writeRecord(h.fd, null);
      } catch {
        // display only
      }
      h.release();
      guard.release();
    };
    return {
      index,
      path: h.path,
      record,
      get released() {
        return h.released;
      },
      release,
      [Symbol.dispose]: release,
    };
  }

  /**
   * Waits for a slot. While waiting, this process is counted by waiting(). Rejects with
   * DlError "busy" after timeoutMs, "cancelled" when the signal aborts.
   */
  async acquire(opts: AcquireOptions): Promise<SlotLease> {
    const first = this.tryAcquire(opts.holder);
    if (first) return first;
    const started = performance.now();
    const pauses = new PollPauses(opts);
    // Counted as waiting until this method returns or throws.
    using _waiting = this.registerWaiter();
    for (;;) {
      if (opts.signal?.aborted) {
        throw new DlError("cancelled", "cancelled while waiting for a slot", { dir: this.dir });
      }
      if (pauses.left() <= 0) {
        throw new DlError("busy", `all ${this.size} slots stayed busy for ${opts.timeoutMs} ms`, {
          dir: this.dir,
          size: this.size,
          waitedMs: Math.round(performance.now() - started),
        });
      }
      await pauses.pause(opts.signal);
      const lease = this.tryAcquire(opts.holder);
      if (lease) return lease;
    }
  }

  /**
   * Marks this caller as waiting: a locked file that is created under a temp name and
   * renamed into view only once locked, so a counter never mistakes it for stale.
   * Disposing the result removes the marker; null if the marker could not be made
   * (waiting still works, it is just not counted).
   */
  private registerWaiter(): Disposable | null {
    for (let attempt = 0; attempt < 5; attempt++) {
      const name = `${process.pid}-${Math.random().toString(36).slice(2, 10)}.lock`;
      const tmp = join(this.waitDir, `${TMP_PREFIX}${name}`);
      const final = join(this.waitDir, name);
      try {
        const h = tryLock(tmp);
        if (!h) continue; // a counter was probing this very file: take another name
        renameSync(tmp, final);
        return {
          [Symbol.dispose]() {
            try {
              unlinkSync(final);
            } catch {
              // a counter may already have removed it
            }
            h.release();
          },
        };
      } catch {
        return null;
      }
    }
    return null;
  }

  /** How many callers (any process) are waiting for a slot right now. Removes stale markers. */
  waiting(): number {
    let names: string[];
    try {
      names = readdirSync(this.waitDir);
    } catch {
      return 0;
    }
    let count = 0;
    for (const name of names) {
      const path = join(this.waitDir, name);
      const isTmp = name.startsWith(TMP_PREFIX);
      if (!isTmp && !name.endsWith(".lock")) continue;
      let h: LockHandle | null;
      try {
        h = tryLock(path, { create: false });
      } catch (e) {
        if (!isDlError(e, "not_found")) throw e;
        continue; // its waiter just finished
      }
      if (!h) {
        if (!isTmp) count++;
        continue;
      }
      // Nobody holds it: its waiter died (or, for a temp file, may be about to lock it).
      using _probe = h;
      try {
        if (!isTmp || Date.now() - statSync(path).mtimeMs > STALE_TMP_MS) unlinkSync(path);
      } catch {
        // removed by someone else
      }
    }
    return count;
  }

  /**
   * Every slot below the current size, held or free. Probing takes each free lock for a
   * moment, so a concurrent tryAcquire may skip that slot once (acquire simply retries).
   */
  holders(): SlotState[] {
    const out: SlotState[] = [];
    for (let index = 0; index < this.size; index++) {
      const path = this.slotPath(index);
      using h = tryLock(path);
      if (h) {
        try {
          // A record left by a killed holder: clear it while we hold the lock.
          if (fstatSync(h.fd).size > 0) writeRecord(h.fd, null);
        } catch {
          // display only
        }
        out.push({ index, held: false, record: null });
        continue;
      }
      let record: SlotRecord | null = null;
      try {
        // The one owner-checked, no-follow, bounded reader: another user's record is not read.
        const read = readChildFileSync(path, SLOT_RECORD_MAX_BYTES);
        record = read.ok ? parseRecord(read.text) : null;
      } catch {
        // unreadable: held, holder unknown
      }
      out.push({ index, held: true, record });
    }
    return out;
  }

  /** Free slots right now (same probe as holders()). */
  free(): number {
    return this.holders().filter((s) => !s.held).length;
  }
}

const SLOT_FILE = /^slot-\d+\.lock$/;

/**
 * Removes a pool folder nobody uses: its guard is free to take exclusive (so no process
 * holds a slot or is between looking one up and taking it), no waiter holds its marker,
 * and no slot file changed for `idleMs`. The folder is renamed away, then deleted, while
 * the guard is held: a process that opened the guard or a slot file before the rename
 * finds it busy or unlinked (stillLinked) and starts again in a fresh folder. True if
 * removed.
 */
export function pruneIdlePool(dir: string, idleMs: number, now = Date.now()): boolean {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => SLOT_FILE.test(n));
  } catch {
    return false;
  }
  let taken: LockHandle | null;
  try {
    taken = tryLock(join(dir, POOL_GUARD), { stillLinked: true });
  } catch {
    return false; // the folder went away meanwhile
  }
  using guard = taken;
  if (!guard) return false;
  for (const name of names) {
    try {
      if (now - statSync(join(dir, name)).mtimeMs < idleMs) return false;
    } catch {
      // removed meanwhile: nothing to wait for
    }
  }
  if (new SlotPool({ dir, size: 1 }).waiting() > 0) return false;
  const trash = join(dirname(dir), `.pruned-${basename(dir)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  try {
    renameSync(dir, trash);
  } catch {
    return false;
  }
  rmSync(trash, { recursive: true, force: true });
  return true;
}
