/**
 * Seconds before retry n of a throttled job (1-based), and before the Codex account's
 * n-th cooldown step: the reference's table; past its end the last step repeats.
 */
export const BACKOFF_S: readonly number[] = [5, 10, 20, 40, 60];

/** Step `n` (1-based) of `table`, in ms. */
export function backoffMs(n: number, table: readonly number[] = BACKOFF_S): number {
  return (table[Math.min(n, table.length) - 1] ?? 60) * 1000;
}
