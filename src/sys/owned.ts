import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import { DlError } from "../errors.ts";

/**
 * dl's state belongs to the user dl runs as: every state and cache folder, and every file
 * dl opens in them, is owned by the effective uid, checked with fstat on the opened
 * descriptor. Anything else is refused whatever its mode, root included: another user's
 * folder or planted store would be written to, and its owner would read dl's rows.
 */
export const euid = () => process.geteuid?.() ?? -1;

/** How a file of another user is named: the settings file's refusal words (settings-file.ts settingsFileProblem). */
export const belongsToAnother = (uid: number | bigint) => `belongs to another user (uid ${uid})`;

/** The one-line refusal of a state folder or file of another user: what it is, and what to do. */
export function notOwned(path: string, st: { uid: number }): DlError {
  const me = euid();
  return new DlError(
    "storage",
    `${path} ${belongsToAnother(st.uid)}, not this user (uid ${me}): dl keeps its state only in folders and files it owns, whatever their mode; if it is yours, run \`sudo chown -R ${me} ${path}\`, else remove it or point dl elsewhere`,
    { cause: "not_owned", path },
  );
}

/** The facts of an opened descriptor, refused when another user owns what it opened. */
export function ownedFd(fd: number, path: string): Stats {
  const st = fstatSync(fd);
  if (st.uid !== euid()) throw notOwned(path, st);
  return st;
}

/** Why `path` could not be opened, as the owner refusal when another user owns it (this user may not enter it). */
function openFailure(path: string, e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== "EACCES" && code !== "EPERM") return e;
  try {
    const st = lstatSync(path);
    return st.uid === euid() ? e : notOwned(path, st);
  } catch {
    return e;
  }
}

/** Opens `path` with `flags`, refusing it (the descriptor closed) when another user owns it. */
export function openOwned(path: string, flags: number, mode?: number): { fd: number; st: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flags | constants.O_NONBLOCK, mode);
  } catch (e) {
    throw openFailure(path, e);
  }
  try {
    return { fd, st: ownedFd(fd, path) };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** A state folder opened without following a link and checked by its descriptor; the caller closes `fd`. */
export function openOwnedDir(dir: string): { fd: number; st: Stats } {
  try {
    return openOwned(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR")
      throw new DlError("storage", `${dir} is not a directory`, { cause: "ENOTDIR", path: dir });
    throw e;
  }
}

/** Why `dl status` shows a state folder as unusable: another user's, as dl would refuse it; null otherwise. */
export function foreignDirProblem(dir: string): string | null {
  try {
    const st = lstatSync(dir);
    return st.uid === euid() ? null : notOwned(dir, st).message;
  } catch {
    return null; // missing: dl makes it
  }
}
