/**
 * Keeps pinging a `dl serve` session while `p` is pending: the proof that the server goes
 * on answering while something hostile is in flight. The ~50 ms between pings only paces
 * the sampling; the loop ends when `p` settles, not after any wait.
 */
export async function pingWhile<T>(
  client: { ping(o: { timeout: number }): Promise<unknown> },
  p: Promise<T>,
  sample: () => number = () => 0,
): Promise<{ value: T; slowestPing: number; pings: number; peakSample: number }> {
  let settled = false;
  let slowestPing = 0;
  let pings = 0;
  let peakSample = 0;
  const done = p.finally(() => {
    settled = true;
  });
  while (!settled) {
    const t0 = performance.now();
    await client.ping({ timeout: 5_000 });
    slowestPing = Math.max(slowestPing, performance.now() - t0);
    pings++;
    peakSample = Math.max(peakSample, sample());
    await Promise.race([done, Bun.sleep(50)]).catch(() => {});
  }
  return { value: await p, slowestPing, pings, peakSample };
}
