import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../errors.ts";

/**
 * Can dl keep state here? Creates the directory (0700) if needed and writes and removes a
 * probe file. Returns null when writable, else a short reason without the path's contents.
 */
export function writableProblem(dir: string): string | null {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const probe = join(dir, `.dl-write-probe-${process.pid}`);
    writeFileSync(probe, "ok", { mode: 0o600 });
    rmSync(probe, { force: true });
    return null;
  } catch (e) {
    return describeError(e);
  }
}
