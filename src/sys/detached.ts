import { closeSync, constants, openSync } from "node:fs";
import { DlError } from "../errors.ts";
import { ownedFd } from "./owned.ts";

export interface DetachedChild {
  pid: number;
  /** Resolves with its exit code (null: a signal ended it) while this process lives. */
  exited: Promise<number | null>;
}

/**
 * Starts a process that outlives this one: its own session and process group (Bun's
 * `detached` calls setsid), stdin closed, its output appended to `logFile` (created
 * 0600, never through a link), not tracked by the group registry, so a stopping server
 * that ends every group it ran leaves it alone, and not keeping this event loop alive.
 * What a job's supervisor is, to the server that started it.
 */
export function spawnDetached(o: {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  logFile: string;
}): DetachedChild {
  let log: number;
  try {
    log = openSync(
      o.logFile,
      constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "unknown";
    throw new DlError("storage", `cannot open ${o.logFile} (${code}); check that the job folder is writable`, {
      path: o.logFile,
    });
  }
  try {
    // Appended to, not made anew: a log of another user's there is refused (sys/owned.ts).
    ownedFd(log, o.logFile);
    const proc = Bun.spawn([...o.argv], {
      cwd: o.cwd,
      env: { ...o.env },
      stdio: ["ignore", log, log],
      detached: true,
    });
    proc.unref();
    return { pid: proc.pid, exited: proc.exited.then(() => proc.exitCode) };
  } catch (e) {
    if (e instanceof DlError) throw e;
    throw new DlError("internal", `could not start ${o.argv[0]}: ${(e as Error).message}`);
  } finally {
    closeSync(log);
  }
}
