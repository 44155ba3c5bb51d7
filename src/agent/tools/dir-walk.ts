import { closeSync, constants, existsSync, mkdirSync, openSync } from "node:fs";
import { relative, sep } from "node:path";
import { escapeError } from "./confine.ts";

/**
 * Linux exposes an open directory as `/proc/self/fd/<fd>`: a path through it starts at
 * that very directory, whatever its name now points to. That gives openat(2) semantics to
 * plain path calls, so write_file can create and rename inside a directory it holds open
 * instead of one it looked up by name (which a racing process can swap for a symlink).
 */
export const FD_PATHS = process.platform === "linux" && existsSync("/proc/self/fd");

export const fdPath = (fd: number, name?: string): string =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

/**
 * Opens `dirAbs` (inside `workdir`, a realpath) one component at a time from the workdir,
 * never following a symlink (O_NOFOLLOW on each), creating missing components unless
 * `create` is false (a missing one is then ENOENT). Returns the descriptor; the caller
 * closes it. A component that is a symlink or not a directory is the path-escape error.
 * Only where FD_PATHS holds.
 */
export function openDirBelow(workdir: string, dirAbs: string, create = true): number {
  const rel = relative(workdir, dirAbs);
  let fd = openSync(workdir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (const part of rel === "" ? [] : rel.split(sep)) {
      const path = fdPath(fd, part);
      try {
        if (create) mkdirSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      let next: number;
      try {
        next = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ELOOP" || code === "ENOTDIR") throw escapeError(rel);
        throw e;
      }
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}
