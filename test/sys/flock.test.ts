import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDlError } from "../../src/errors.ts";
import { EBADF, EWOULDBLOCK, flockFd, lock, tryLock } from "../../src/sys/flock.ts";
import { isAlive } from "../../src/sys/identity.ts";
import { tempDir } from "../helpers/dl.ts";
import { startFixture, stopAll, until } from "./util.ts";

const dir = tempDir("dl-flock");
afterEach(stopAll);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `l${n++}.lock`);

describe("tryLock / release", () => {
  test("exclusive even within one process; release is idempotent; file is 0600", () => {
    const p = fresh();
    const a = tryLock(p);
    expect(a).not.toBeNull();
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(tryLock(p)).toBeNull();
    a!.release();
    expect(a!.released).toBe(true);
    a!.release();
    const b = tryLock(p);
    expect(b).not.toBeNull();
    b!.release();
  });

  test("a lock held with `using` is released when its scope ends, even by a throw", () => {
    const p = fresh();
    const hold = (fail: boolean) => {
      using h = tryLock(p);
      expect(h).not.toBeNull();
      expect(tryLock(p)).toBeNull();
      if (fail) throw new Error("boom");
      return h;
    };
    expect(hold(false)?.released).toBe(true);
    expect(() => hold(true)).toThrow("boom");
    const again = tryLock(p);
    expect(again).not.toBeNull();
    again!.release();
  });

  test("a symlinked lock file is refused with a lock error and its target is untouched", () => {
    const target = join(dir, "target.txt");
    writeFileSync(target, "keep");
    const link = fresh();
    symlinkSync(target, link);
    let err: unknown;
    try {
      tryLock(link);
    } catch (e) {
      err = e;
    }
    expect(isDlError(err, "lock")).toBe(true);
    expect((err as Error).message).toContain("symlink");
    expect(readFileSync(target, "utf8")).toBe("keep");
    // A dangling link must not create its target either.
    const dangling = fresh();
    symlinkSync(join(dir, "nowhere"), dangling);
    expect(() => tryLock(dangling)).toThrow(/symlink/);
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
  });

  test("a missing folder is a lock error that says what to check", () => {
    expect(() => tryLock(join(dir, "no", "such", "x.lock"))).toThrow(/folder exists/);
  });

  test("errno is read for real: EBADF on a bad fd, EWOULDBLOCK on contention", () => {
    expect(flockFd(-1, 2 | 4)).toBe(EBADF);
    const p = fresh();
    const a = tryLock(p)!;
    const fd = openSync(p, "r+");
    expect(flockFd(fd, 2 | 4)).toBe(EWOULDBLOCK);
    closeSync(fd);
    a.release();
    expect(EWOULDBLOCK).toBe(process.platform === "linux" ? 11 : 35);
  });
});

describe("lock (waiting)", () => {
  test("times out with a timeout error", async () => {
    const p = fresh();
    const a = tryLock(p)!;
    const t0 = performance.now();
    await expect(lock(p, { timeoutMs: 60 })).rejects.toMatchObject({ code: "timeout" });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(59);
    a.release();
  });

  test("abort rejects with cancelled, promptly", async () => {
    const p = fresh();
    const a = tryLock(p)!;
    const ac = new AbortController();
    const waiting = lock(p, { signal: ac.signal, maxPollMs: 1000 });
    setTimeout(() => ac.abort(), 20);
    const t0 = performance.now();
    await expect(waiting).rejects.toMatchObject({ code: "cancelled" });
    expect(performance.now() - t0).toBeLessThan(500);
    a.release();
  });

  test("gets the lock once the holder releases; `using` always releases", async () => {
    const p = fresh();
    const a = tryLock(p)!;
    const waiting = lock(p, { timeoutMs: 5000 });
    setTimeout(() => a.release(), 10);
    const b = await waiting;
    expect(b.released).toBe(false);
    b.release();
    const withLock = async <T>(fn: () => Promise<T> | T): Promise<T> => {
      using _h = await lock(p);
      return await fn();
    };
    await expect(withLock(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await withLock(() => (tryLock(p) === null ? "held inside" : "free inside"))).toBe("held inside");
    const c = tryLock(p);
    expect(c).not.toBeNull();
    c!.release();
  });
});

describe("across processes", () => {
  test("another process's lock blocks us; SIGKILL frees it at once, though its child (no inherited fd) lives on", async () => {
    const p = fresh();
    const holder = startFixture("sys-lock-holder.ts", [p, "--spawn-child"]);
    await until(() => holder.stdout().text().includes("locked"), "holder to lock");
    const childPid = Number(/locked (\d+)/.exec(holder.stdout().text())?.[1]);
    expect(tryLock(p)).toBeNull();
    await expect(lock(p, { timeoutMs: 50 })).rejects.toMatchObject({ code: "timeout" });

    const waiting = lock(p, { timeoutMs: 10_000, maxPollMs: 10 });
    const t0 = performance.now();
    process.kill(holder.pid, "SIGKILL");
    const h = await waiting;
    const ms = performance.now() - t0;
    console.log(`lock taken ${ms.toFixed(1)} ms after SIGKILL of the holder`);
    expect(isAlive(childPid)).toBe(true); // the holder's child still runs, and did not keep the lock
    h.release();
  });

  test("a second process sees our lock", async () => {
    const p = fresh();
    const mine = tryLock(p)!;
    const other = startFixture("sys-lock-holder.ts", [p]);
    const exit = await other.exited;
    expect(exit.exitCode).toBe(3);
    expect(other.stdout().text()).toBe("busy\n");
    mine.release();
  });
});
