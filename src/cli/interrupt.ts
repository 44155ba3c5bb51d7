import { EXIT_AFTER_SIGNAL as EXIT_AFTER } from "./exit.ts";

/**
 * Ctrl-C and SIGTERM on the command line. A command that has something to clean up takes
 * an interrupt signal (its work aborts, it tidies up and returns, exit 130 after SIGINT,
 * 143 after SIGTERM, the shell convention); every other command keeps the signals' default
 * action, so the kernel ends it at once, whatever it is blocked on (a JavaScript handler
 * cannot run while a synchronous call holds the thread: a store file that blocks open(),
 * a busy database). `dl serve` handles its own signals and is not covered here.
 */
type Caught = keyof typeof EXIT_AFTER;
const SIGNALS = Object.keys(EXIT_AFTER) as Caught[];

let caught: Caught | null = null;

/**
 * Runs a synchronous call that may block (it reads a store, a file, the process table)
 * with the signals' default action: a signal meanwhile ends the process at once instead of
 * waiting in a queue for a handler that cannot run until the call returns.
 */
function withDefaultSignals<T>(fn: () => T): T {
  const saved = SIGNALS.map((sig) => [sig, process.listeners(sig)] as const);
  for (const sig of SIGNALS) process.removeAllListeners(sig);
  try {
    return fn();
  } finally {
    for (const [sig, listeners] of saved) for (const l of listeners) process.on(sig, l);
  }
}

export interface InterruptScope extends Disposable {
  /** Fires on SIGINT or SIGTERM while the scope lives and no `blocking` call runs. */
  signal: AbortSignal;
  /** Wraps each synchronous call that may block: see withDefaultSignals. */
  blocking: <T>(fn: () => T) => T;
}

/**
 * An AbortSignal that fires on SIGINT or SIGTERM while the returned scope lives. A second
 * Ctrl-C while the command is still tidying up ends the process at once.
 */
export function interruptScope(): InterruptScope {
  const abort = new AbortController();
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
    blocking: withDefaultSignals,
    [Symbol.dispose]() {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

/** 130 or 143 when the run was interrupted, else null. */
export function interruptedExitCode(): number | null {
  return caught ? EXIT_AFTER[caught] : null;
}
