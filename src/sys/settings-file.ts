import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { DlError } from "../errors.ts";
import { privateDir } from "./private-file.ts";

/**
 * Reads the per-user settings file (config.ts parses it). It steers which programs dl
 * starts (DELEGATE_CODEX_BIN …) and holds keys, so it is trusted only when it is private:
 * a regular file owned by this user that no one else may read or write. A link is followed
 * (a dotfiles checkout often links it), and the checks are on the opened file. The open
 * cannot block (a FIFO in its place), and a file larger than any settings file is refused.
 */
const MAX_BYTES = 64 * 1024;

export type SettingsFileRead =
  | { state: "absent" }
  | { state: "read"; text: string; mode: string }
  | { state: "refused"; problem: string; fix: string };

const octal = (mode: number) => `0${(mode & 0o777).toString(8).padStart(3, "0")}`;
const REMOVE = "remove it, then run dl init to write a new one";

/** What stops a file with these facts from being trusted, or null. */
export function settingsFileProblem(
  st: { isFile(): boolean; uid: number; mode: number; size: number },
  uid: number | null,
  file: string,
): { problem: string; fix: string } | null {
  if (!st.isFile()) return { problem: "is not a regular file", fix: REMOVE };
  if (uid !== null && st.uid !== uid) return { problem: `belongs to another user (uid ${st.uid})`, fix: REMOVE };
  if (st.mode & 0o077)
    return {
      problem: `can be read or written by others (mode ${octal(st.mode)})`,
      fix: `run chmod 600 ${file}, then dl status`,
    };
  if (st.size > MAX_BYTES)
    return { problem: `is larger than ${MAX_BYTES} bytes`, fix: "keep only dl's settings in it, then run dl status" };
  return null;
}

/** What this user can see of `file` without opening it (a file it can see but not read is refused). */
function seen(file: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

/** The first folder on the way to `file` this user may not enter, or null when it can reach it. */
function closedFolder(file: string): string | null {
  const parts = dirname(file).split("/").filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const dir = `/${parts.slice(0, i).join("/")}`;
    try {
      accessSync(dir, constants.X_OK);
    } catch {
      return dir;
    }
  }
  return null;
}

const ownerOf = (p: string): number | null => {
  try {
    return statSync(p).uid;
  } catch {
    return null;
  }
};

/**
 * A settings file hidden behind a folder this user may not enter. In a tree that is not
 * this user's (a HOME of another user's, or under a folder of root's) there is no settings
 * file of this user's: that is "none". In its own tree (the closed folder, or the one that
 * holds it, is this user's: ~/.config left to root by a `sudo dl init`) its settings would
 * be ignored without a word, so it is refused, naming the folder and the fix.
 */
function hiddenByFolder(file: string, uid: number | null): SettingsFileRead {
  const closed = closedFolder(file);
  if (closed === null || uid === null) return { state: "absent" };
  const owner = ownerOf(closed);
  if (owner !== uid && ownerOf(dirname(closed)) !== uid) return { state: "absent" };
  let mode = "";
  try {
    mode = `, mode ${octal(statSync(closed).mode)}`;
  } catch {
    // its mode is a detail
  }
  return {
    state: "refused",
    problem: `is behind ${closed} (owner uid ${owner ?? "unknown"}${mode}), which this user (uid ${uid}) cannot enter`,
    fix: `give the folder back: sudo chown -R ${uid} ${closed} (or chmod u+rx ${closed})`,
  };
}

/** A file this user can see but not open: another user's, or its own without read permission. */
function unreadable(file: string, code: string, st: NonNullable<ReturnType<typeof statSync>>): SettingsFileRead {
  const uid = process.getuid?.() ?? null;
  if (uid !== null && st.uid !== uid)
    return { state: "refused", problem: `belongs to another user (uid ${st.uid})`, fix: REMOVE };
  return {
    state: "refused",
    problem: `cannot be read (${code}, mode ${octal(Number(st.mode))})`,
    fix: `run chmod 600 ${file}, then dl status`,
  };
}

export function readSettingsFile(file: string): SettingsFileRead {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    const bad = settingsFileProblem(st, process.getuid?.() ?? null, file);
    if (bad) return { state: "refused", ...bad };
    const buf = Buffer.alloc(MAX_BYTES + 1);
    let got = 0;
    for (let n = -1; n !== 0 && got < buf.length; got += n) n = readSync(fd, buf, got, buf.length - got, got);
    return { state: "read", text: buf.subarray(0, got).toString("utf8"), mode: octal(st.mode) };
  } catch (e) {
    const code = String((e as NodeJS.ErrnoException).code ?? "error").slice(0, 20);
    if (code === "ENOENT" || code === "ENOTDIR") return { state: "absent" };
    const st = seen(file);
    if (st) return unreadable(file, code, st);
    return closedFolder(file) !== null ? hiddenByFolder(file, process.getuid?.() ?? null) : { state: "absent" };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes the settings file whole: a private temp file beside it renamed over it, so a
 * reader sees the old file or the new one, and the folder is the user's alone.
 */
export function writeSettingsFile(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    // Its folder too: a ~/.config/dl left 0755 by another tool is tightened (another user's refused).
    privateDir(dirname(file));
    writeFileSync(tmp, text, { mode: 0o600, flag: "wx" });
    renameSync(tmp, file);
  } catch (e) {
    throw unwritable(file, e);
  } finally {
    removeQuietly(tmp);
  }
}

/** Removes a leftover temp file; where its folder is not one (a file in the way), there is none. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // nothing of ours is there
  }
}

/** Why the settings file could not be written, with the folder at fault and what to do. */
function unwritable(file: string, e: unknown): DlError {
  const err = e as NodeJS.ErrnoException;
  const code = String(err.code ?? "error").slice(0, 20);
  const where = typeof err.path === "string" && err.path !== file ? ` (${code} on ${err.path})` : ` (${code})`;
  const fix =
    code === "EACCES" || code === "EPERM" || code === "EROFS"
      ? "run dl init as the user whose HOME it is, or point HOME (or XDG_CONFIG_HOME, on Linux) at a folder you can write"
      : code === "ENOTDIR" || code === "EEXIST"
        ? "a file stands where that folder should be: move it away, then run dl init again"
        : "check that folder, then run dl init again";
  return new DlError("storage", `cannot write the settings file ${file}${where}: ${fix}`, { path: file });
}
