import { DlError } from "../errors.ts";
import { groupAlive, type TerminateResult, terminateGroup } from "./process-group.ts";
import { type Captured, type ExitInfo, type GroupChild, type SpawnGroupOptions, spawnGroup } from "./process-spawn.ts";

/** Run a command to completion in its own group, with a timeout and an abort signal. */

export interface RunOptions extends SpawnGroupOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL on timeout/abort. */
  graceMs?: number;
  /**
   * After the leader exits on its own, terminate what is left of its group (background
   * jobs it forked), so nothing outlives the run and the pipes close. Default true.
   */
  reapGroup?: boolean;
  /** How long to wait for the pipes to close once the group is gone. */
  drainMs?: number;
  /**
   * Called once, right after the spawn, with the child's ids (the job runner records
   * them). A `gated` command runs once what it returns (a promise, or not) is true;
   * anything else, a rejection included, and it never runs.
   */
  onSpawn?: (child: { pid: number; pgid: number }) => unknown;
  /**
   * When set, a failed SIGTERM/SIGKILL of the group is reported here and the run still
   * returns its result; without it the run rejects with that error.
   */
  onStopError?: (e: unknown) => void;
}

export interface RunResult extends ExitInfo {
  pid: number;
  pgid: number;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  stdout: Captured;
  stderr: Captured;
  /**
   * A jailed command only: why it never started (its jail's set-up failed), or null; null
   * too when dl stopped it first (timedOut, aborted). Learned out of band
   * (sys/jail-start.ts), never from the command's output.
   */
  jailSetupFailure: string | null;
}

/**
 * Runs argv in its own group and waits for it. On timeout or abort the whole group is
 * terminated (grandchildren too) and the result says why. Throws DlError "cancelled" if
 * the signal is already aborted (nothing is started).
 */
export async function runGroup(opts: RunOptions): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    const r = await runGroupOnce(opts);
    // A jail whose set-up failed ran nothing: with several jails starting at once,
    // bwrap's loopback set-up has failed now and then where the next start works.
    if (!r.jailSetupFailure || r.timedOut || r.aborted || attempt >= JAIL_SETUP_TRIES) return r;
  }
}

/** How often a jail whose set-up failed (nothing ran) is started before the failure stands. */
const JAIL_SETUP_TRIES = 3;

/** A gated child's gate, once onSpawn's answer is known: open only on true (a rejection shuts it too). */
function decideGate(child: Pick<GroupChild, "openGate" | "shutGate">, mayRun: unknown): void {
  void Promise.resolve(mayRun).then(
    (ok) => (ok === true ? child.openGate() : child.shutGate()),
    () => child.shutGate(),
  );
}

async function runGroupOnce(opts: RunOptions): Promise<RunResult> {
  if (opts.signal?.aborted) throw new DlError("cancelled", "cancelled before the command started");
  const started = performance.now();
  const child = spawnGroup(opts);
  const grace = opts.graceMs ?? 2000;
  let timedOut = false;
  let aborted = false;
  const terminate = (ms: number): Promise<TerminateResult | undefined> => {
    const t = terminateGroup(child.pgid, ms);
    const report = opts.onStopError;
    return report ? t.catch((e) => void report(e)) : t;
  };
  let stopping: Promise<TerminateResult | undefined> | null = null;
  const stop = () => {
    stopping ??= terminate(grace);
  };
  const timer =
    opts.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          stop();
        }, opts.timeoutMs)
      : null;
  const onAbort = () => {
    aborted = true;
    stop();
  };
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  // After the listener: the hook may abort the run at once.
  const mayRun = opts.onSpawn?.({ pid: child.pid, pgid: child.pgid });
  if (opts.gated) decideGate(child, mayRun);
  try {
    const exit = await child.exited;
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    if (stopping) await stopping;
    else if (opts.reapGroup !== false && groupAlive(child.pgid)) await terminate(Math.min(grace, 500));
    const drainTimer = setTimeout(() => child.stopCapture(), opts.drainMs ?? 1000);
    await child.drained;
    clearTimeout(drainTimer);
    const setup = await child.jailSetupFailure;
    return {
      ...exit,
      pid: child.pid,
      pgid: child.pgid,
      timedOut,
      aborted,
      durationMs: Math.round(performance.now() - started),
      stdout: child.stdout(),
      stderr: child.stderr(),
      // Stopped by dl (its timeout, a cancel) before the jail started the command: that
      // is a timeout or a cancel, not a jail that could not start.
      jailSetupFailure: timedOut || aborted ? null : setup,
    };
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
