import { expect, test } from "bun:test";
import { Semaphore } from "../../src/agent/semaphore.ts";

test("a semaphore slot held with `using` is freed when its scope ends, and wakes the next waiter", async () => {
  const s = new Semaphore(1);
  let woke = false;
  {
    using _slot = await s.acquire();
    expect(s.inUse).toBe(1);
    void s.acquire().then((next) => {
      woke = true;
      next();
    });
    await Promise.resolve();
    expect(woke).toBe(false);
  }
  await Promise.resolve();
  expect(woke).toBe(true);
  expect(s.inUse).toBe(0);
});
