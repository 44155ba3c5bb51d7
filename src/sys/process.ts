import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { DlError } from "../errors.ts";

/**
 * Children run in their own session and process group (Bun's `detached: true` calls
 * setsid, so pgid = sid = pid). Killing `-pgid` then reaches every grandchild a CLI or a
 * shell command forks, and a signal aimed at the child never hits our own group.
 */

export type StreamName = "stdout" | "stderr";

export interface SpawnGroupOptions {
  argv: readonly string[];
  cwd: string;
  /** The whole environment of the child; process.env is never inherited. */
  env: Readonly<Record<string, string>>;
  /** Bytes kept per stream (the first N); the rest is counted, not stored. */
  stdoutCap?: number;
  stderrCap?: number;
  /** Every chunk as it arrives (also past the cap): lets callers track last activity. */
  onOutput?: (stream: StreamName, chunk: Uint8Array) => void;
}

export interface Captured {
  /** The first `cap` bytes. */
  bytes: Uint8Array;
  /** Everything the stream produced, kept or not. */
  totalBytes: number;
  truncated: boolean;
  text(): string;
}

export interface ExitInfo {
  /** null when a signal ended the process. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface GroupChild {
  pid: number;
  pgid: number;
  /** Resolves when the group leader exits (grandchildren may live on). */
  exited: Promise<ExitInfo>;
  /** Resolves when both pipes are closed, or when stopCapture() gives up on them. */
  drained: Promise<void>;
  /** What has been captured so far. */
  stdout(): Captured;
  stderr(): Captured;
  /** Stops reading both pipes (an escaped grandchild may hold them open forever). */
  stopCapture(): void;
}

export const DEFAULT_OUTPUT_CAP = 1024 * 1024;

class CaptureSink {
  private chunks: Uint8Array[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    const room = this.cap - this.kept;
    if (room <= 0) return;
    const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
    // Copy: the stream may reuse its buffer.
    this.chunks.push(part.slice());
    this.kept += part.byteLength;
  }

  snapshot(): Captured {
    const bytes = new Uint8Array(this.kept);
    let at = 0;
    for (const c of this.chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    const totalBytes = this.total;
    return {
      bytes,
      totalBytes,
      truncated: totalBytes > bytes.byteLength,
      // A cut may split a UTF-8 sequence; the decoder substitutes U+FFFD, never throws.
      text: () => new TextDecoder().decode(bytes),
    };
  }
}

/** The part of a stream reader pump needs (Bun's and lib.dom's reader types disagree). */
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
}

async function pump(
  reader: ChunkReader,
  sink: CaptureSink,
  name: StreamName,
  onOutput: SpawnGroupOptions["onOutput"],
): Promise<void> {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || !value) return;
      sink.push(value);
      if (onOutput) {
        try {
          onOutput(name, value);
        } catch {
          // A broken observer must not stop the capture (the child would block on a full pipe).
        }
      }
    }
  } catch {
    // Cancelled by stopCapture(), or the pipe broke: what we have is what we report.
  }
}

/** Starts argv in a new process group. Throws DlError "not_found" if it cannot start. */
export function spawnGroup(opts: SpawnGroupOptions): GroupChild {
  if (opts.argv.length === 0) throw new DlError("bad_input", "spawnGroup needs a command");
  let proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    proc = Bun.spawn({
      cmd: [...opts.argv],
      cwd: opts.cwd,
      env: { ...opts.env },
      detached: true,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (e) {
    const errno = (e as NodeJS.ErrnoException).code ?? "unknown";
    // Name only the program, never its arguments (they may carry prompts or paths).
    throw new DlError(
      "not_found",
      `could not start ${basename(opts.argv[0] ?? "")} (${errno}): check that it is installed and on PATH, and that the working directory exists`,
      { program: basename(opts.argv[0] ?? ""), errno },
    );
  }
  const out = new CaptureSink(opts.stdoutCap ?? DEFAULT_OUTPUT_CAP);
  const err = new CaptureSink(opts.stderrCap ?? DEFAULT_OUTPUT_CAP);
  const outReader = proc.stdout.getReader();
  const errReader = proc.stderr.getReader();
  const drained = Promise.all([
    pump(outReader, out, "stdout", opts.onOutput),
    pump(errReader, err, "stderr", opts.onOutput),
  ]).then(() => undefined);
  const exited = proc.exited.then(
    (): ExitInfo => ({
      exitCode: proc.signalCode ? null : proc.exitCode,
      signal: (proc.signalCode as NodeJS.Signals | null) ?? null,
    }),
  );
  return {
    pid: proc.pid,
    pgid: proc.pid,
    exited,
    drained,
    stdout: () => out.snapshot(),
    stderr: () => err.snapshot(),
    stopCapture: () => {
      outReader.cancel().catch(() => {});
      errReader.cancel().catch(() => {});
    },
  };
}

let ownGroup: number | null | undefined;

/** Our own process group, so a bug can never make us signal ourselves and our parent. */
function ownPgid(): number | null {
  if (ownGroup !== undefined) return ownGroup;
  ownGroup = null;
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ownGroup = Number(fields[2]); // state ppid pgrp …
  } catch {
    try {
      const r = Bun.spawnSync({ cmd: ["ps", "-o", "pgid=", "-p", String(process.pid)], env: { PATH: "/bin:/usr/bin" } });
      const n = Number(r.stdout.toString().trim());
      if (Number.isInteger(n) && n > 0) ownGroup = n;
    } catch {
      // Unknown: the pid > 1 and != own pid checks still apply.
    }
  }
  return ownGroup;
}

function checkPgid(pgid: number): void {
  if (!Number.isInteger(pgid) || pgid <= 1 || pgid === process.pid || pgid === ownPgid()) {
    throw new DlError("internal", `refusing to signal process group ${pgid}`, { pgid });
  }
}

/** Sends a signal to every process of the group. False if the group is already gone. */
export function killGroup(pgid: number, signal: NodeJS.Signals | 0 = "SIGTERM"): boolean {
  checkPgid(pgid);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true; // exists, but not ours: still alive
    throw e;
  }
}

/**
 * Linux only: true if some member of the group is not a zombie. An unreaped zombie
 * keeps kill(-pgid, 0) succeeding, and an init that never reaps would make a dead group
 * look alive forever. null when /proc cannot tell.
 */
function groupHasLiveMember(pgid: number): boolean | null {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return null;
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(f[2]) === pgid && f[0] !== "Z" && f[0] !== "X") return true;
  }
  return false;
}

/** True while any process of the group is alive. */
export function groupAlive(pgid: number): boolean {
  if (!killGroup(pgid, 0)) return false;
  return groupHasLiveMember(pgid) ?? true;
}

export interface TerminateResult {
  /** SIGKILL was needed (something outlived the grace period). */
  killed: boolean;
  /** The group is gone; false only if it survived SIGKILL for `killWaitMs`. */
  gone: boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  let step = 5;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    if (performance.now() >= deadline) return false;
    await sleep(Math.min(step, Math.max(1, deadline - performance.now())));
    step = Math.min(step * 2, 50);
  }
}

/** SIGTERM the group, SIGKILL it after `graceMs`, resolve once it is gone. */
export async function terminateGroup(pgid: number, graceMs: number, killWaitMs = 5000): Promise<TerminateResult> {
  if (!killGroup(pgid, "SIGTERM")) return { killed: false, gone: true };
  if (await waitGone(pgid, graceMs)) return { killed: false, gone: true };
  killGroup(pgid, "SIGKILL");
  return { killed: true, gone: await waitGone(pgid, killWaitMs) };
}

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
}

export interface RunResult extends ExitInfo {
  pid: number;
  pgid: number;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  stdout: Captured;
  stderr: Captured;
}

/**
 * Runs argv in its own group and waits for it. On timeout or abort the whole group is
 * terminated (grandchildren too) and the result says why. Throws DlError "cancelled" if
 * the signal is already aborted (nothing is started).
 */
export async function runGroup(opts: RunOptions): Promise<RunResult> {
  if (opts.signal?.aborted) throw new DlError("cancelled", "cancelled before the command started");
  const started = performance.now();
  const child = spawnGroup(opts);
  const grace = opts.graceMs ?? 2000;
  let timedOut = false;
  let aborted = false;
  let stopping: Promise<TerminateResult> | null = null;
  const stop = () => {
    stopping ??= terminateGroup(child.pgid, grace);
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
  try {
    const exit = await child.exited;
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    if (stopping) await stopping;
    else if (opts.reapGroup !== false && groupAlive(child.pgid)) await terminateGroup(child.pgid, Math.min(grace, 500));
    const drainTimer = setTimeout(() => child.stopCapture(), opts.drainMs ?? 1000);
    await child.drained;
    clearTimeout(drainTimer);
    return {
      ...exit,
      pid: child.pid,
      pgid: child.pgid,
      timedOut,
      aborted,
      durationMs: Math.round(performance.now() - started),
      stdout: child.stdout(),
      stderr: child.stderr(),
    };
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}
