import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { belongsToAnother, euid } from "./owned.ts";

/**
 * The one way dl reads a file that a job's child wrote (dsh `result.json`, Codex
 * `last-message.txt`, an agent's `progress.json`, a job's `outcome.json`, Codex session
 * files). Such a file is hostile: a FIFO blocks a plain open until someone writes, a link
 * to `/dev/zero` never ends, a symlink points at any file dl can read and would echo it.
 * So: no-follow and non-blocking open, a regular file or refused, at most `maxBytes` read,
 * and only asynchronous calls, so a slow file never holds the server's event loop.
 * And this user's file only (fstat on the opened descriptor, as sys/owned.ts does for
 * writes): every such file sits in dl's state, where another user's file was planted.
 */

/** Why a file was not read. The text of a refused file is never part of the answer. */
type ChildFileRefusal = "missing" | "symlink" | "not_regular" | "too_large" | "unreadable" | "foreign";

export type ChildFileRead =
  | { ok: true; text: string; truncated: boolean }
  | { ok: false; refusal: ChildFileRefusal; detail: string; uid?: number };

export interface ChildFileOptions {
  maxBytes: number;
  /**
   * What a file longer than `maxBytes` gets: `refuse` (a result that cannot be cut, like
   * JSON), `head` (its first maxBytes, truncated: true), `tail` (its last maxBytes, for logs).
   */
  over: "refuse" | "head" | "tail";
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function refused(refusal: ChildFileRefusal, detail: string): ChildFileRead {
  return { ok: false, refusal, detail };
}

/** What an open or stat error means; the errno code only, never the path or message. */
function fromError(e: unknown): ChildFileRead {
  const code = String((e as NodeJS.ErrnoException).code ?? "error");
  if (code === "ENOENT" || code === "ENOTDIR") return refused("missing", "does not exist");
  // O_NOFOLLOW on a symlink: ELOOP on Linux and macOS, EMLINK on FreeBSD.
  if (code === "ELOOP" || code === "EMLINK") return refused("symlink", "is a symbolic link");
  return refused("unreadable", `could not be read (${code.slice(0, 20)})`);
}

/** Why an opened file is not read before any byte of it is: another user's, or not a regular file; null when it is read. */
function openedProblem(st: {
  uid: number;
  isFile(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isDirectory(): boolean;
}): ChildFileRead | null {
  if (st.uid !== euid()) return { ok: false, refusal: "foreign", detail: belongsToAnother(st.uid), uid: st.uid };
  return st.isFile() ? null : refused("not_regular", `is ${kindOf(st)}`);
}

function kindOf(st: { isFIFO(): boolean; isCharacterDevice(): boolean; isDirectory(): boolean }): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice()) return "a device";
  if (st.isDirectory()) return "a directory";
  return "not a regular file";
}

/** Reads `[from, from + want)` or until EOF, whichever comes first. */
async function readRange(fh: FileHandle, from: number, want: number): Promise<Buffer> {
  const buf = Buffer.alloc(want);
  let got = 0;
  while (got < want) {
    const { bytesRead } = await fh.read(buf, got, want - got, from + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

async function readBounded(fh: FileHandle, size: number, o: ChildFileOptions): Promise<ChildFileRead> {
  if (o.over === "tail" && size > o.maxBytes) {
    const buf = await readRange(fh, size - o.maxBytes, o.maxBytes);
    return { ok: true, text: buf.toString("utf8"), truncated: true };
  }
  // One byte past the cap tells "exactly the cap" from "more": the size a stat reports is
  // not trusted (a file may still grow, /proc-like files report 0).
  const buf = await readRange(fh, 0, o.maxBytes + 1);
  if (buf.byteLength <= o.maxBytes) return { ok: true, text: buf.toString("utf8"), truncated: false };
  if (o.over === "refuse") return refused("too_large", `is larger than ${o.maxBytes} bytes`);
  return { ok: true, text: buf.subarray(0, o.maxBytes).toString("utf8"), truncated: true };
}

/**
 * Reads a child-written file under the rules above. Never throws and never blocks on the
 * file: every outcome is a value, and a refusal says why in words that hold no content.
 */
export async function readChildFile(path: string, o: ChildFileOptions): Promise<ChildFileRead> {
  let fh: FileHandle | undefined;
  try {
    // No-follow: a symlink is refused by the open itself. Non-blocking: a FIFO opens at
    // once instead of waiting for a writer. The checks are on the open file (fstat), so
    // swapping the path after a check gains nothing.
    fh = await open(path, OPEN_FLAGS);
    const st = await fh.stat();
    const problem = openedProblem(st);
    if (problem) return problem;
    return await readBounded(fh, st.size, o);
  } catch (e) {
    return fromError(e);
  } finally {
    await fh?.close().catch(() => {});
  }
}

/**
 * The same rules for a small file read on a synchronous path (the Codex admission gate
 * fingerprints auth.json and reads shared.json between ticks): the open cannot block, a
 * file that is not regular is refused before any read, and at most `maxBytes` + 1 bytes
 * of a regular file are read. A file over the cap is refused.
 */
export function readChildFileSync(path: string, maxBytes: number): ChildFileRead {
  let fd: number | undefined;
  try {
    fd = openSync(path, OPEN_FLAGS);
    const problem = openedProblem(fstatSync(fd));
    if (problem) return problem;
    const buf = Buffer.alloc(maxBytes + 1);
    let got = 0;
    for (let n = -1; n !== 0 && got < buf.length; got += n) n = readSync(fd, buf, got, buf.length - got, got);
    if (got > maxBytes) return refused("too_large", `is larger than ${maxBytes} bytes`);
    return { ok: true, text: buf.subarray(0, got).toString("utf8"), truncated: false };
  } catch (e) {
    return fromError(e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
