/**
 * Polls until cond() returns something truthy and resolves to it; fails with `what` after
 * the deadline. Tests wait for the condition itself, never for a fixed time.
 *
 * The first looks come quickly (2, 4, 8 … ms) and then every 25 ms; a wait that has
 * already lasted a second looks every 100 ms. Most conditions are a tool call or a `dl`
 * command, which costs a few ms of CPU in the test and in the server each time: on a
 * machine running the whole suite, a job that takes seconds is not worth 40 looks a second.
 *
 * The default deadline is generous because a wait that succeeds costs nothing extra: the
 * suite runs six files at once, and on a 2-core machine a job that is done in 2.4 s alone
 * once took over 10 s (test/jobs/providers/codex/caps.test.ts, in a full CI run).
 */
export async function until<T>(cond: () => T | Promise<T>, what: string, ms = 30_000): Promise<NonNullable<T>> {
  const start = performance.now();
  const deadline = start + ms;
  let step = 2;
  for (;;) {
    const v = await cond();
    if (v) return v as NonNullable<T>;
    const now = performance.now();
    if (now > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(Math.min(step, Math.max(1, deadline - now)));
    step = Math.min(step * 2, now - start < LONG_WAIT_MS ? 25 : 100);
  }
}

/** After this long, a wait is one for a job or a process, not for an answer. */
const LONG_WAIT_MS = 1000;
