import { isAbsolute, relative, resolve, sep } from "node:path";
import { DlError } from "../../errors.ts";
import { realpathDeepest } from "../../sys/paths.ts";

/**
 * Resolves a path a model gave a tool to an absolute path inside `workdir`.
 *
 * A lexical check alone is not enough: `link -> /etc` inside the workdir makes
 * `link/passwd` look confined. So the deepest part of the path that exists is resolved
 * with realpath (following every symlink), and what does not exist yet is appended; the
 * result must still sit under the workdir's own realpath. `workdirReal` must already be
 * a realpath (the loop resolves it once).
 */
export async function confinePath(workdirReal: string, given: string, allowEscape: boolean): Promise<string> {
  if (typeof given !== "string" || given.trim() === "") {
    throw new DlError("bad_input", "path is empty: pass a file path relative to the working directory");
  }
  if (given.includes("\0")) throw new DlError("bad_input", "path contains a NUL byte");
  const target = resolve(workdirReal, given);
  if (allowEscape) return target;
  if (!inside(workdirReal, target)) throw escapeError(given);
  const real = realpathDeepest(target);
  if (real === null || !inside(workdirReal, real)) throw escapeError(given);
  return real;
}

export function inside(root: string, p: string): boolean {
  if (p === root) return true;
  const rel = relative(root, p);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

export function escapeError(given: string): DlError {
  return new DlError(
    "path_escape",
    `path ${JSON.stringify(given.slice(0, 200))} is outside the working directory (directly, through '..' or through a symlink); use a path inside the working directory`,
  );
}

/** A path relative to the workdir for messages, or the absolute one if it is outside. */
export function displayPath(workdirReal: string, abs: string): string {
  const rel = relative(workdirReal, abs);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? abs : rel;
}
