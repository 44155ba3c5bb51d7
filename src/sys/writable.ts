import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { describeError } from "../errors.ts";

export type DirState = { exists: boolean; problem: string | null };

/**
 * Can dl keep state in `dir`? Answered without writing anything, for a health check that must create
 * nothing: an existing dir must be a writable directory; a missing one must be creatable,
 * i.e. its nearest existing ancestor is a writable directory.
 */
export function dirState(dir: string): DirState {
  const exists = existsSync(dir);
  let probe = dir;
  while (!existsSync(probe)) {
    const parent = dirname(probe);
    if (parent === probe) return { exists, problem: "no existing parent directory" };
    probe = parent;
  }
  try {
    if (!statSync(probe).isDirectory())
      return { exists, problem: exists ? "not a directory" : `${probe} is not a directory` };
    accessSync(probe, constants.W_OK | constants.X_OK);
    return { exists, problem: null };
  } catch (e) {
    return { exists, problem: exists ? describeError(e) : `cannot be created in ${probe} (${describeError(e)})` };
  }
}
