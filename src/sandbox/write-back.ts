import { closeSync, constants, fchmodSync, openSync, writeFileSync } from "node:fs";

/**
 * A file dl puts back after a jailed job (a manifest whole, a package.json with its keys
 * restored) as a new file, never written through a name the job left (the caller removed
 * it), with the mode it had before the job: set on the created file with fchmod, so the
 * umask plays no part (a 0600 package.json does not come back 0644, nor 0666 under umask 0).
 */
export function writeBack(path: string, bytes: string | Uint8Array, mode: number): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeFileSync(fd, bytes);
    fchmodSync(fd, mode & 0o7777);
  } finally {
    closeSync(fd);
  }
}
