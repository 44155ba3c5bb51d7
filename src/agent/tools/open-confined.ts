import { closeSync, constants, fstatSync, lstatSync, openSync, realpathSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { displayPath, escapeError, inside } from "./confine.ts";
import { FD_PATHS, fdPath, openDirBelow } from "./dir-walk.ts";

/**
 * Opening a path that confinePath checked, without the race between the check and the
 * open: another process can swap a directory on the way for a symlink to somewhere else
 * in between (it escaped on 2.6 % of reads before this). So the final component is
 * opened with O_NOFOLLOW, and the descriptor is then proved to be the file the checked
 * path names now: that path must still resolve to itself inside the workdir, and its
 * device and inode must be the descriptor's (on Linux, openWalked below needs no proof).
 */
export type Confinement = { workdir: string; allowEscape: boolean };

/** An open descriptor on `abs` and what fstat says about it; the caller closes it. */
export function openConfined(abs: string, flags: number, where: Confinement, mode?: number): { fd: number; st: Stats } {
  if (FD_PATHS && !where.allowEscape) return openWalked(abs, flags, where, mode);
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

/**
 * Linux: no check-then-open at all. The directory is opened one component at a time from
 * the workdir without following links (dir-walk.ts), and the file is opened through that
 * descriptor with O_NOFOLLOW, so what is opened is what lies inside the workdir at that
 * moment, whatever a racing process swaps afterwards. (Proving after the fact could be
 * fooled: a swap back between the realpath and the lstat of the proof let 2 of 300 reads
 * through.)
 */
function openWalked(abs: string, flags: number, where: Confinement, mode?: number): { fd: number; st: Stats } {
  const dirFd = openDirBelow(where.workdir, dirname(abs), false);
  let fd: number;
  try {
    fd = openSync(fdPath(dirFd, basename(abs)), flags | constants.O_NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw escapeError(displayPath(where.workdir, abs));
    throw e;
  } finally {
    closeSync(dirFd);
  }
  try {
    return { fd, st: fstatSync(fd) };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}
