import { closeSync, readSync } from "node:fs";

/**
 * How dl knows, out of band, whether a jail's command ever started. The jail's entry is a
 * POSIX sh that writes one byte on JAIL_RAN_FD, closes it and only then execs the command;
 * the pipe's read end stays with dl. So "nothing ran" is the absence of that byte, which no
 * program inside the jail can bring about once it runs (the byte is already in the pipe),
 * and nothing a command prints can make dl say it: the child's stdout and stderr are never
 * read for the verdict. When nothing ran, stderr holds only the jail's own words (bwrap's),
 * so they may be quoted as the cause.
 */

export const JAIL_RAN_FD = 5;

/** argv behind the entry that reports the start on JAIL_RAN_FD (`&&`: no byte, no command). */
export function markedEntry(argv: readonly string[]): string[] {
  const script = `printf 1 >&${JAIL_RAN_FD} && exec ${JAIL_RAN_FD}>&- && exec "$@"`;
  return ["/bin/sh", "-c", script, "dl-jail", ...argv];
}

/**
 * Whether the byte arrived, read once the jail's first process has exited (its writer
 * wrote before the command ran, so the byte is there if it ever will be). The pipe is
 * non-blocking: an empty one answers EAGAIN or end of file, never waits. Closes `fd`.
 */
export function commandStarted(fd: number): boolean {
  try {
    return readSync(fd, Buffer.alloc(1)) === 1;
  } catch {
    return false;
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}
