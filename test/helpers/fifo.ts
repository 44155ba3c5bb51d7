import { expect } from "bun:test";

/** A FIFO at `path` (mkfifo(1): neither Node nor Bun makes one), as a hostile child leaves it. */
export function makeFifo(path: string): void {
  expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
}
