import { readSync } from "node:fs";

/**
 * Up to `max` bytes of an open file, read to EOF (a file can change size after fstat):
 * null when it holds more than `max`. Synchronous: the callers read many small files
 * one after another, where each async read would cost a thread-pool round trip.
 */
export function readCapped(fd: number, max: number, sizeHint = 0): Buffer | null {
  let buf = Buffer.allocUnsafe(Math.min(max, sizeHint) + 1);
  let n = 0;
  for (;;) {
    if (n === buf.length) {
      if (n > max) return null;
      const bigger = Buffer.allocUnsafe(Math.min(max + 1, buf.length * 2));
      buf.copy(bigger, 0, 0, n);
      buf = bigger;
    }
    const got = readSync(fd, buf, n, buf.length - n, null);
    if (got === 0) return buf.subarray(0, n);
    n += got;
  }
}

const BINARY_SNIFF = 8_000;

/** A NUL byte near the start: how git and ripgrep tell a binary file. */
export const looksBinary = (buf: Buffer): boolean => buf.subarray(0, BINARY_SNIFF).includes(0);
