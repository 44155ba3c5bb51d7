/**
 * Exit codes shared by every command: 0 done, 1 the work failed (a check, a job, a run),
 * 2 a usage or configuration error, before anything ran. `dl wait` adds its own above
 * these (jobs/wait.ts WAIT_EXIT).
 */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The shell convention after an interrupt: 128 + the signal's number. */
export const EXIT_AFTER_SIGNAL = { SIGINT: 130, SIGTERM: 143 } as const;
