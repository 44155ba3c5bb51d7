import { closeSync, writeSync } from "node:fs";

/**
 * A job's child may not run before dl has written who it is. A supervisor that died
 * between the spawn and that write would leave a child nobody can verify (the row names
 * no pid and start time), so nothing would ever stop it. A gated child starts as a POSIX
 * sh that waits for one line on START_GATE_FD and only then execs the command; dl holds
 * the other end and writes the line once the row names the child. The end of file
 * without it, because dl shut the gate or died holding it, makes the entry exit
 * GATE_SHUT_EXIT with nothing run. exec keeps the pid, start time, group and session, so
 * the identity recorded for the waiting sh is the command's.
 */

export const START_GATE_FD = 6;

/** The gated entry's exit when the gate closed without opening: the command never ran. */
export const GATE_SHUT_EXIT = 125;

/** argv behind the entry that waits at the gate (`||`: no line, no command). */
export function gatedEntry(argv: readonly string[]): string[] {
  const fd = START_GATE_FD;
  const script = `IFS= read -r _ <&${fd} || exit ${GATE_SHUT_EXIT}; exec ${fd}<&- && exec "$@"`;
  return ["/bin/sh", "-c", script, "dl-gate", ...argv];
}

/** dl's end of one child's gate: opened (the command runs) or shut (it never does), once. */
export class StartGate {
  private fd: number | null;

  constructor(fd: number) {
    this.fd = fd;
  }

  open(): void {
    const fd = this.take();
    if (fd === null) return;
    try {
      writeSync(fd, "go\n");
    } catch {
      // The entry is gone already (killed while it waited): nothing to let through.
    } finally {
      closeSync(fd);
    }
  }

  shut(): void {
    const fd = this.take();
    if (fd !== null) closeSync(fd);
  }

  private take(): number | null {
    const fd = this.fd;
    this.fd = null;
    return fd;
  }
}
