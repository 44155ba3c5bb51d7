import { chmodSync, cpSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { isWithin } from "../sys/paths.ts";
import { entryId } from "./tree-scan.ts";

/**
 * Moving the job's entries out of the work tree, which the job may have made hard: after
 * planting `pkg/.claude` it can `chmod a-w pkg` (the rename fails) or leave a read-only
 * folder inside it (the copy fallback cannot remove it). Folders it could have chmodded —
 * inside the workdir, owned by dl's own uid — get u+w back for the move and their mode
 * after. What still cannot move is reported, never thrown: the verdict names it and the
 * rest is moved out all the same.
 */

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

/** Why a move failed, short and without the job's file contents. */
export function whyNot(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code}${err.syscall ? ` on ${err.syscall}` : ""}` : String(err.message ?? e).slice(0, 200);
}

function attempt(from: string, dest: string): void {
  try {
    renameSync(from, dest);
  } catch (e) {
    if (code(e) !== "EXDEV") throw e;
    // Another file system: copy without following links, then remove.
    cpSync(from, dest, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    rmSync(from, { recursive: true, force: true });
  }
}

type Unlocked = { path: string; mode: number }[];

/** u+w on `dir` if the job could have taken it away: a folder in the workdir that dl's uid owns. */
function unlock(root: string, dir: string, done: Unlocked): void {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || !isWithin(dir, root) || st.uid !== process.getuid?.() || st.mode & 0o200) return;
    chmodSync(dir, st.mode | 0o200);
    done.push({ path: dir, mode: st.mode & 0o7777 });
  } catch {
    // gone, or not ours to change: the retry says what remains
  }
}

/** The entry and the folders below it (a folder's rename rewrites its `..`; removal needs each folder writable). */
function unlockTree(root: string, path: string, done: Unlocked): void {
  unlock(root, path, done);
  let names: string[] = [];
  try {
    if (lstatSync(path).isDirectory()) names = readdirSync(path);
  } catch {
    return;
  }
  for (const n of names) unlockTree(root, join(path, n), done);
}

/** Moves workdir-relative `rel` to the same place under `quarantine`. Null when moved, else why not. */
export function moveOut(root: string, rel: string, quarantine: string): string | null {
  const from = join(root, rel);
  const dest = join(quarantine, rel);
  const unlocked: Unlocked = [];
  try {
    mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
    try {
      attempt(from, dest);
    } catch (e) {
      if (code(e) !== "EACCES" && code(e) !== "EPERM") throw e;
      unlock(root, dirname(from), unlocked);
      unlockTree(root, from, unlocked);
      attempt(from, dest);
    }
    return null;
  } catch (e) {
    return whyNot(e);
  } finally {
    // The job's folders as it left them (the moved ones are gone from here: nothing to do).
    for (const u of unlocked.reverse()) {
      try {
        if (lstatSync(u.path).isDirectory()) chmodSync(u.path, u.mode);
      } catch {
        // moved out with its entry
      }
    }
  }
}

/** Entry id → path of everything moved out into `quarantine` (an original the job moved into a planted folder is there). */
export function quarantinedIds(quarantine: string, limit = 100_000): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[] = [];
  try {
    names = readdirSync(quarantine, { recursive: true }) as string[];
  } catch {
    return out;
  }
  for (const n of names.slice(0, limit)) {
    try {
      out.set(entryId(lstatSync(join(quarantine, n))), join(quarantine, n));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
