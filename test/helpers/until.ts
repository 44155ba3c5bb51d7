/**
 * Polls until cond() is true; fails with `what` after the deadline. Tests wait for the
 * condition itself, never for a fixed time.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  let step = 2;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(step);
    step = Math.min(step * 2, 25);
  }
}
