/**
 * A small seeded generator (mulberry32) for the chaos and fuzz suites: the same seed
 * replays the same run. The seed comes from `envName` when set, else from the clock, and
 * every failure message of those suites carries it.
 */
export interface Rng {
  seed: number;
  /** In [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

export function seedFrom(envName: string): number {
  const raw = process.env[envName];
  if (raw !== undefined && raw.trim() !== "") {
    const n = Number(raw);
    if (!Number.isInteger(n)) throw new Error(`${envName} must be an integer seed, got ${raw}`);
    return n >>> 0;
  }
  return (Date.now() ^ (process.pid << 16)) >>> 0;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    seed,
    next,
    int,
    pick: <T>(items: readonly T[]) => items[int(items.length)] as T,
    chance: (p: number) => next() < p,
  };
}

/** A positive integer from the environment (suite sizes), or the CI default. */
export function sizeFrom(envName: string, fallback: number): number {
  const raw = process.env[envName];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${envName} must be a whole number >= 1, got ${raw}`);
  return n;
}
