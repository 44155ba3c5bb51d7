import { closeSync, constants, fchmodSync, ftruncateSync, mkdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, sep } from "node:path";
import { DlError } from "../errors.ts";
import { isFolder } from "./file-head.ts";
import { openOwned, openOwnedDir } from "./owned.ts";
import { redact } from "./redact.ts";
import { refuseUnsafeAncestors } from "./safe-ancestors.ts";

/**
 * dl's private state: every folder it keeps state in (the provider state dirs, the cache
 * dir, their job, slot, conversation and transcript folders) is 0700 and owned by this
 * user (another user's is refused whatever its mode, sys/owned.ts), and every file it
 * writes there is this user's and 0600, opened without following a link and redacted
 * (sys/redact.ts) on its way to the disk. The only writer of those files: a
 * state file written any other way would skip both guards.
 */

const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

/** One existing folder made private: this user's folder is tightened, anyone else's refused whatever its mode. */
function tighten(dir: string): void {
  const { fd, st } = openOwnedDir(dir);
  try {
    // Root does not take over another user's folder either (openOwnedDir refused it): its owner decides.
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, PRIVATE_DIR_MODE);
  } finally {
    closeSync(fd);
  }
}

/** `dir` made when missing (its parent is there), then tightened. */
function makeOne(dir: string): void {
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  tighten(dir);
}

/**
 * Makes `dir` (and whatever of its path is missing) exist as a private folder. With
 * `root`, every folder from `root` down to `dir` is checked and tightened too, from the
 * top, before anything is made inside it (nothing is made in another user's folder): a
 * state dir or a `jobs/` made 0755 by an older dl, a user or a tool, is 0700 afterwards.
 * Above that, every existing folder up to / must leave no other user a way to swap it
 * (sys/safe-ancestors.ts), checked before anything is made.
 */
export function privateDir(dir: string, root?: string): void {
  const chain = [dir];
  if (root !== undefined && (dir === root || dir.startsWith(root.endsWith(sep) ? root : root + sep))) {
    for (let d = dirname(dir); d.length >= root.length && d !== dirname(d); d = dirname(d)) {
      chain.push(d);
      if (d === root) break;
    }
  }
  chain.reverse();
  refuseUnsafeAncestors(chain[0]!);
  makeParents(dirname(chain[0]!));
  for (const d of chain) makeOne(d);
}

/** The folders above a private one, made when missing; a file in their place is ENOTDIR, as the kernel says it. */
function makeParents(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST" || isFolder(dir)) throw e;
    throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: "ENOTDIR", path: dir });
  }
}

/**
 * Opens `path` for writing, refusing a link, anything but a regular file and a file of
 * another user, and makes it 0600. A truncating open truncates only once the file is
 * known to be this user's.
 */
function openPrivate(path: string, flags: number): number {
  const truncate = (flags & constants.O_TRUNC) !== 0;
  const { fd, st } = openOwned(path, (flags & ~constants.O_TRUNC) | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    if (!st.isFile()) throw new DlError("storage", `${path} is not a regular file`, { path });
    if (truncate) ftruncateSync(fd, 0);
    fchmodSync(fd, PRIVATE_FILE_MODE);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * How a private file's text is redacted: whole, here (the default), or string by string by
 * its caller, who serialized typed data and cut each string as its field needs (a
 * conversation keeps its workdir cut of held keys only: sys/redact.ts redactIdentifier).
 */
export type Redaction = "whole" | "by-caller";

function writeAll(fd: number, text: string, at?: number, redaction: Redaction = "whole"): void {
  const buf = Buffer.from(redaction === "whole" ? redact(text) : text, "utf8");
  let done = 0;
  while (done < buf.byteLength)
    done += writeSync(fd, buf, done, buf.byteLength - done, at === undefined ? null : at + done);
}

/** A new file (never one already there: a planted name is refused), `text` redacted. */
export function writeNewPrivate(path: string, text: string, redaction: Redaction = "whole"): void {
  const fd = openPrivate(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
  try {
    writeAll(fd, text, undefined, redaction);
  } finally {
    closeSync(fd);
  }
}

/** `path` replaced whole by `text` (redacted), atomically: written under a new name, renamed over it. */
export function replacePrivate(path: string, text: string, redaction: Redaction = "whole"): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    writeNewPrivate(tmp, text, redaction);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** `path` (created if missing, truncated otherwise) holding `text` (redacted). */
export function rewritePrivate(path: string, text: string): void {
  const fd = openPrivate(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC);
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * The existing file at `path` overwritten from its start and cut to `size` bytes: no new
 * blocks are needed when `size` is what it already held (a reserved file on a full disk).
 */
export function overwritePrivate(path: string, text: string, size: number): void {
  const fd = openPrivate(path, constants.O_RDWR);
  try {
    writeAll(fd, text, 0);
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
}

/** An open file lines are appended to, each redacted. */
export interface PrivateAppender {
  append(text: string): void;
  close(): void;
}

/** A new file (O_EXCL, like writeNewPrivate) kept open for appending. */
export function createPrivateAppender(path: string): PrivateAppender {
  const fd = openPrivate(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND);
  let open = true;
  return {
    append(text) {
      if (open) writeAll(fd, text);
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}
