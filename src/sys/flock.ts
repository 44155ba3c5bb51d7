import { dlopen, FFIType, type Pointer, read } from "bun:ffi";
import { closeSync, constants, fchmodSync, fstatSync, openSync, statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { DlError } from "../errors.ts";
import { euid, notOwned } from "./owned.ts";

/**
 * flock(2) through bun:ffi. Caps that must hold across processes (model pools, job
 * caps) are exclusive locks on files: the kernel drops a dead process's locks at once, so
 * a crash never leaves a phantom holder, and nothing has to expire.
 *
 * We never block in flock: the event loop must keep running (MCP frames, timers, other
 * jobs), so waiting is LOCK_NB polled with a short backoff.
 *
 * Locks belong to the open file description: two tryLock calls on one path in the same
 * process conflict like two processes would. Node/Bun open files O_CLOEXEC, so a child
 * we spawn never inherits (and never keeps alive) a lock we hold.
 */

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const EINTR = 4;
export const EBADF = 9;
/** EWOULDBLOCK (= EAGAIN): Linux 11, Darwin and BSDs 35. */
export const EWOULDBLOCK = process.platform === "linux" ? 11 : 35;

interface Libc {
  flock(fd: number, op: number): number;
  /** Pointer to this thread's errno; null when the libc does not export it under a known name. */
  errnoPtr: (() => Pointer | null) | null;
}

let libc: Libc | null = null;

function candidates(): { paths: string[]; errnoFn: string } {
  if (process.platform === "darwin") {
    return { paths: ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"], errnoFn: "__error" };
  }
  // glibc first, then musl (Alpine) names.
  return {
    paths: ["libc.so.6", "libc.so", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`],
    errnoFn: "__errno_location",
  };
}

function loadLibc(): Libc {
  if (libc) return libc;
  const { paths, errnoFn } = candidates();
  const flockDef = { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } as const;
  const errnoDef = { args: [], returns: FFIType.ptr } as const;
  for (const path of paths) {
    for (const withErrno of [true, false]) {
      try {
        const lib = dlopen(path, withErrno ? { flock: flockDef, [errnoFn]: errnoDef } : { flock: flockDef });
        // The symbol names are chosen at run time, so the typed view is lost: restore it.
        const syms = lib.symbols as unknown as Record<string, (...args: number[]) => unknown>;
        const flock = syms.flock as (fd: number, op: number) => number;
        const errnoPtr = withErrno ? (syms[errnoFn] as () => Pointer | null) : null;
        libc = { flock, errnoPtr };
        return libc;
      } catch {
        // next shape or next candidate
      }
    }
  }
  throw new DlError(
    "lock",
    `cannot load flock from the C library (tried ${paths.join(", ")}); dl needs a glibc, musl or macOS system library`,
  );
}

/**
 * flock on an fd; returns 0 on success or the errno. bun:ffi does not expose errno, so
 * we read it through libc's own accessor (__errno_location / __error) right after the
 * failed call, on the same thread and with no JS in between that could make a syscall.
 * If that accessor is missing we assume EWOULDBLOCK: on an fd we just opened, LOCK_NB
 * fails for contention, or EINTR (retried anyway), and hardly anything else.
 */
export function flockFd(fd: number, op: number): number {
  const c = loadLibc();
  for (let attempt = 0; ; attempt++) {
    if (c.flock(fd, op) === 0) return 0;
    const p = c.errnoPtr?.() ?? null;
    const errno = p ? read.i32(p, 0) : EWOULDBLOCK;
    if (errno !== EINTR || attempt >= 10) return errno;
  }
}

/** A held lock. Disposable: `using h = await lock(path)` unlocks when the scope ends. */
export interface LockHandle extends Disposable {
  readonly path: string;
  /** The locked fd: write through it (slot records) while the lock is held. */
  readonly fd: number;
  readonly released: boolean;
  /** Unlocks and closes. Safe to call more than once. */
  release(): void;
}

function openLockFile(path: string, create: boolean): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | (create ? constants.O_CREAT : 0) | constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "unknown";
    if (code === "ENOENT" && !create) throw new DlError("not_found", `lock file ${path} does not exist`, { path });
    if (code === "ELOOP" || code === "EMLINK") {
      throw new DlError("lock", `lock file ${path} is a symlink; dl refuses to follow it. Remove the link and retry`, {
        path,
        errno: code,
      });
    }
    throw new DlError(
      "lock",
      `cannot open lock file ${path} (${code}): check that its folder exists and is writable by you`,
      { path, errno: code },
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw new DlError("lock", `lock file ${path} is not a regular file; remove it and retry`, { path });
    }
    // Another user's is refused whatever its mode (sys/owned.ts); one left 0644 by an older
    // dl (or a umask) is made private like every state file.
    if (st.uid !== euid()) throw notOwned(path, st);
    if (st.mode & 0o077) fchmodSync(fd, 0o600);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

function handle(path: string, fd: number): LockHandle {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    flockFd(fd, LOCK_UN);
    try {
      closeSync(fd);
    } catch {
      // already closed: nothing left to release
    }
  };
  return {
    path,
    fd,
    get released() {
      return released;
    },
    release,
    [Symbol.dispose]: release,
  };
}

export interface TryLockOptions {
  /** Create the file if missing (default). With false, a missing file is DlError "not_found". */
  create?: boolean;
  /**
   * After locking, check that the path still names the locked file. A folder pruned
   * between our open and our flock would otherwise leave us holding a deleted file while
   * someone else locks its replacement; then this returns null and the caller retries.
   */
  stillLinked?: boolean;
  /** A shared lock (many holders, excluded only by an exclusive one) instead of an exclusive one. */
  shared?: boolean;
}

function sameFile(fd: number, path: string): boolean {
  try {
    const held = fstatSync(fd);
    const now = statSync(path);
    return held.nlink > 0 && held.ino === now.ino && held.dev === now.dev;
  } catch {
    return false;
  }
}

/** Takes the lock if it is free right now; null if another holder has it. */
export function tryLock(path: string, opts: TryLockOptions = {}): LockHandle | null {
  const fd = openLockFile(path, opts.create !== false);
  const errno = flockFd(fd, (opts.shared ? LOCK_SH : LOCK_EX) | LOCK_NB);
  if (errno === 0) {
    const h = handle(path, fd);
    if (!opts.stillLinked || sameFile(fd, path)) return h;
    h.release();
    return null;
  }
  closeSync(fd);
  if (errno === EWOULDBLOCK) return null;
  throw new DlError("lock", `flock failed on ${path} (errno ${errno}); the file system may not support locks`, {
    path,
    errno,
  });
}

export interface LockWaitOptions {
  signal?: AbortSignal;
  /** Give up after this long (DlError "timeout"). Default: wait until the signal aborts. */
  timeoutMs?: number;
  /** Longest pause between attempts. */
  maxPollMs?: number;
}

/**
 * Waits for the lock, polling with a backoff (2 ms growing to maxPollMs, jittered so
 * waiters do not retry in step). Rejects DlError "timeout" or "cancelled".
 */
export async function lock(path: string, opts: LockWaitOptions = {}): Promise<LockHandle> {
  const pauses = new PollPauses(opts);
  for (;;) {
    if (opts.signal?.aborted) throw new DlError("cancelled", `cancelled while waiting for lock ${path}`, { path });
    const h = tryLock(path);
    if (h) return h;
    if (pauses.left() <= 0) {
      throw new DlError("timeout", `lock ${path} still held by another process after ${opts.timeoutMs} ms`, {
        path,
        timeoutMs: opts.timeoutMs,
      });
    }
    await pauses.pause(opts.signal);
  }
}

/**
 * The pauses of a lock poll (a flock, a slot pool): 2 ms growing 1.5x to `maxPollMs`
 * (50 by default), each jittered so waiters do not retry in step, none past the
 * deadline `timeoutMs` sets. The caller checks `left()` and throws its own timeout.
 */
export class PollPauses {
  private readonly deadline: number;
  private readonly maxPollMs: number;
  private step = 2;

  constructor(o: { timeoutMs?: number; maxPollMs?: number }) {
    this.deadline = o.timeoutMs === undefined ? Infinity : performance.now() + o.timeoutMs;
    this.maxPollMs = o.maxPollMs ?? 50;
  }

  /** Milliseconds before the deadline; 0 or less once it has passed. */
  left(): number {
    return this.deadline - performance.now();
  }

  async pause(signal?: AbortSignal): Promise<void> {
    await abortablePause(Math.min(this.left(), this.step * (0.5 + Math.random())), signal);
    this.step = Math.min(this.step * 1.5, this.maxPollMs);
  }
}

/** A pause that ends early when the signal aborts (the caller's loop then throws "cancelled"). */
function abortablePause(ms: number, signal?: AbortSignal): Promise<void> {
  return sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);
}
