import { EXIT_AFTER_SIGNAL as EXIT_AFTER } from "./exit.ts";

/**
 * Ctrl-C on the command line. A command that has something to clean up takes an
 * interrupt signal (its work aborts, it tidies up and returns); every other command is
 * simply ended. Either way the exit code is the shell convention: 130 after SIGINT, 143
 * after SIGTERM, so a script can tell "interrupted" from "failed". `dl serve` handles its
 * own signals and is not covered here.
 */
type Caught = keyof typeof EXIT_AFTER;

let caught: Caught | null = null;
let claims = 0;

/** Ends the process at the first signal, unless a command has claimed signals. */
export function installInterruptExit(): void {
  for (const sig of Object.keys(EXIT_AFTER) as Caught[]) {
    process.on(sig, () => {
      caught ??= sig;
      if (claims === 0) process.exit(EXIT_AFTER[sig]);
    });
  }
}

/**
 * An AbortSignal that fires on SIGINT or SIGTERM while the returned scope lives. A second
 * Ctrl-C while the command is still tidying up ends the process at once.
 */
export function interruptScope(): { signal: AbortSignal } & Disposable {
  const abort = new AbortController();
  claims++;
  let seen = 0;
  const onSignal = (sig: Caught) => {
    caught ??= sig;
    if (++seen > 1) process.exit(EXIT_AFTER[sig]);
    abort.abort();
  };
  const onInt = () => onSignal("SIGINT");
  const onTerm = () => onSignal("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return {
    signal: abort.signal,
    [Symbol.dispose]() {
      claims--;
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

/** 130 or 143 when the run was interrupted, else null. */
export function interruptedExitCode(): number | null {
  return caught ? EXIT_AFTER[caught] : null;
}
