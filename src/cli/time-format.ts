/**
 * Times as a person reads them in a terminal: how long ago for the last day ("42s ago",
 * "3h10m ago"), the local date and time before that ("2026-11-28 14:03"), in the machine's
 * time zone. `--json` keeps ISO 8601 (UTC) for programs.
 */
const DAY_MS = 86_400_000;

/** A duration as people read it: 42s, 3m05s, 2h10m, 3d04h. */
export function humanAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, "0")}h`;
}

const two = (n: number) => String(n).padStart(2, "0");

/** The local date and time to the minute: 2026-11-28 14:03. */
export function localTime(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** When something happened: relative within the last day, local time before (or in the future). */
export function whenText(t: number, now: number): string {
  const ago = now - t;
  if (ago < 0 || ago >= DAY_MS) return localTime(t);
  return ago < 5000 ? "just now" : `${humanAge(ago)} ago`;
}

/** ISO 8601 in UTC, for --json; null stays null. */
export function isoTime(t: number | null): string | null {
  return t === null ? null : new Date(t).toISOString();
}
