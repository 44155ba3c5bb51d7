import type { CommandJail } from "../../sandbox/command-jail.ts";
import type { Semaphore } from "../semaphore.ts";
import type { WriteProtection } from "./protect-write.ts";

/**
 * What the agent tools can be told, and their defaults. Apart from the tools so that
 * settings (built at every start) never load the tools' code and schemas, which only a
 * run needs.
 */

export type ReadFileSettings = {
  /** Text returned per call (~50 KB); the model pages with offset/limit beyond it. */
  maxBytesPerCall: number;
  /** Files larger than this are refused outright (reading them would only burn memory). */
  maxFileBytes: number;
  /** A single line longer than this is cut, so one minified line cannot eat the page. */
  maxLineChars: number;
};

export const READ_FILE_DEFAULTS: ReadFileSettings = {
  maxBytesPerCall: 50_000,
  maxFileBytes: 20 * 1024 * 1024,
  maxLineChars: 2_000,
};

export type WriteFileSettings = {
  /** Largest content accepted in one call, in bytes (UTF-8). */
  maxBytes: number;
  /** What the write tools refuse (protect-write.ts): the user's writable exceptions, git's environment. */
  protect: WriteProtection;
};

export const WRITE_FILE_DEFAULTS: WriteFileSettings = {
  maxBytes: 5 * 1024 * 1024,
  protect: { writable: [], gitEnv: { PATH: "/usr/bin:/bin" } },
};

export type RunBashSettings = {
  /** DELEGATE_RUN_BASH=0 removes the tool (the loop leaves it out). */
  enabled: boolean;
  /** DELEGATE_RUN_BASH_TIMEOUT, in ms; the whole process group dies when it passes. */
  timeoutMs: number;
  stdoutCap: number;
  stderrCap: number;
  /** The environment to filter (config passes a snapshot; tools never read process.env). */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** DELEGATE_ENV_PASSTHROUGH names. */
  passthrough: readonly string[];
  /** Commands running at once in this process, across all agent runs. */
  maxConcurrent: number;
  /** Tests inject their own; otherwise one process-wide semaphore per cap value. */
  limiter?: Semaphore;
  /** Between SIGTERM and SIGKILL when the timeout or an abort stops a command. */
  graceMs: number;
  /**
   * DELEGATE_RUN_BASH_SANDBOX: every command runs inside this jail, and a jail that
   * cannot start fails the command (never a run outside it). Null: no jail.
   */
  jail?: CommandJail | null;
};

/**
 * What run_bash keeps of a command's output and how long it waits between SIGTERM and
 * SIGKILL: limits of the tool, not settings (whether it runs, its timeout, its
 * concurrency and passthrough are SETTINGS', filled in by dispatch/agent-settings.ts).
 */
export const RUN_BASH_LIMITS: Pick<RunBashSettings, "stdoutCap" | "stderrCap" | "graceMs"> = {
  stdoutCap: 12 * 1024,
  stderrCap: 4 * 1024,
  graceMs: 2_000,
};

export type SearchSettings = {
  /** Matching lines returned when the model names no max_results. */
  defaultResults: number;
  /** The most a model may ask for. */
  maxResults: number;
  /** Files listed by list_files before the list is cut. */
  maxListed: number;
  /** A matching line longer than this is shown as a window around the match. */
  maxLineChars: number;
  /** Files larger than this are skipped (and counted in the note). */
  maxFileBytes: number;
  /** Bytes read across all files before a search stops. */
  maxScanBytes: number;
  /** Directory entries looked at before a walk stops. */
  maxEntries: number;
  /** Wall-clock budget of one call. */
  timeMs: number;
};

export const SEARCH_DEFAULTS: SearchSettings = {
  defaultResults: 100,
  maxResults: 500,
  maxListed: 1_000,
  maxLineChars: 300,
  maxFileBytes: 4 * 1024 * 1024,
  maxScanBytes: 256 * 1024 * 1024,
  maxEntries: 200_000,
  timeMs: 15_000,
};
