/**
 * Polls until cond() returns something truthy and resolves to it; fails with `what` after
 * the deadline. Tests wait for the condition itself, never for a fixed time.
 */
export async function until<T>(cond: () => T | Promise<T>, what: string, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = performance.now() + ms;
  let step = 2;
  for (;;) {
    const v = await cond();
    if (v) return v as NonNullable<T>;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(step);
    step = Math.min(step * 2, 25);
  }
}
