/**
 * The process groups this process started and has not yet seen die. It exists for one
 * moment: shutdown. Our children live in their own sessions, so nothing (no SIGHUP from
 * a closing terminal, no kill of our own group) reaches them when we go; whoever stops
 * dl must be able to find every group still out there and end it.
 *
 * Pure bookkeeping, no signals: spawnGroup adds, the liveness and termination helpers
 * remove a group once they have seen it gone (so a pgid the kernel later hands to an
 * unrelated process is not remembered for long).
 */

const live = new Set<number>();

export function trackGroup(pgid: number): void {
  live.add(pgid);
}

export function untrackGroup(pgid: number): void {
  live.delete(pgid);
}

/** A snapshot: callers may untrack while they walk it. */
export function trackedGroups(): number[] {
  return [...live];
}
