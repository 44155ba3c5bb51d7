import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";

/**
 * Two questions the guards ask of a path a configuration names, answered once here:
 * whether the entry itself is there (a link counts, whatever it points at), and what the
 * first bytes of a regular file say (never through a link, never a FIFO that would block).
 */

/** Whether `path` itself is there; a dangling link is there too. */
export function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The first `maxBytes` of a regular file as UTF-8, or null for anything else (a link, a folder, a FIFO, gone). */
export function readRegularHead(path: string, maxBytes: number): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    // Sized to the file (and what it may have grown by since), not to the cap: the guards
    // read thousands of small files per write, and zero-filling 256 KiB each was most of it.
    const size = Math.min(maxBytes, st.size + 4096);
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString("utf8");
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether `path` is a regular file itself (a link is not followed). */
export function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether `path` is a folder itself (a link is not followed). */
export function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
