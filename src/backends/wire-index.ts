/**
 * Indices a stream names its blocks and tool calls by. They come from the backend, so
 * they are checked before use: a reply that claimed block 4294967294 once made dl walk a
 * 4-billion-slot sparse array for 80 s of CPU, during which no deadline could fire.
 * Real servers count from 0 up, one per block; no reply has anywhere near this many.
 */
const MAX_WIRE_INDEX = 1023;

/** A stream the readers cannot use; client.ts turns it into a protocol error (not retried). */
export class WireShapeError extends Error {
  override readonly name = "WireShapeError";
}

/** `v` as an index in 0..MAX_WIRE_INDEX, or a WireShapeError naming what was wrong. */
export function wireIndex(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_WIRE_INDEX) return v;
  const shown = typeof v === "number" || typeof v === "string" ? String(v).slice(0, 40) : typeof v;
  throw new WireShapeError(`${what} index ${shown} is not an integer in 0..${MAX_WIRE_INDEX}`);
}
