import { closeSync, constants, openSync } from "node:fs";
import { basename } from "node:path";
import { DlError } from "../errors.ts";
import { trackGroup, untrackGroup } from "./group-registry.ts";
import { attachJail, type JailNet } from "./jail-net.ts";
import { commandStarted, JAIL_RAN_FD } from "./jail-start.ts";
import { inOwnPidNamespace } from "./pid-namespace.ts";
import { killGroup } from "./process-group.ts";
import { learnNamed } from "./redact.ts";
import { gatedEntry, START_GATE_FD, StartGate } from "./start-gate.ts";

/**
 * Starting a child in its own session and process group (Bun's `detached: true` calls
 * setsid, so pgid = sid = pid), and capturing its output up to a cap. Every group started
 * here is tracked until it is seen gone, so a stopping server can end them all.
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
  /**
   * The command is bwrap waiting on its info and block fds (sandbox/bwrap.ts): attach
   * the network forwarder and the process limit before it runs. If that fails the group
   * is killed. Its command sits behind sys/jail-start.ts's markedEntry.
   */
  jailNet?: JailNet;
  /** A jail without those fds (sandbox-exec) whose command sits behind markedEntry too. */
  jailMarked?: boolean;
  /**
   * A child dl does not jail: as root on Linux it runs in a pid namespace of its own
   * (sys/pid-namespace.ts), so /proc shows it neither dl nor any other process.
   */
  ownPidNamespace?: boolean;
  /**
   * A file the child reads as its stdin (a prompt kept out of argv, which every local
   * user can read in /proc/<pid>/cmdline); without it the child has no stdin.
   */
  stdinFile?: string;
  /**
   * The command waits at a start gate (sys/start-gate.ts) until `openGate()`: a job's
   * runner lets it through once the row names the child. `shutGate()`, or dl's death,
   * ends it with nothing run.
   */
  gated?: boolean;
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
  /**
   * Once the leader has exited: why the jail's command never started (dl's own account of
   * its set-up, else the jail's own words), or null when it started or there is no jail.
   * Known out of band (sys/jail-start.ts), never from what the command printed.
   */
  jailSetupFailure: Promise<string | null>;
  /** A gated child's command runs from now on (no-op when not gated, or once decided). */
  openGate(): void;
  /** A gated child's command never runs: its entry exits (no-op when not gated, or once decided). */
  shutGate(): void;
}

const DEFAULT_OUTPUT_CAP = 1024 * 1024;

/** Characters of text before a dropped chunk read with it, so a `NAME=value` split across two chunks is whole. */
const LEARN_CARRY = 4096;
/** Bytes past the cap read for what they name, at most: a child that prints gigabytes costs no more than this. */
const LEARN_DROPPED_MAX = 256 * 1024 * 1024;

class CaptureSink {
  private chunks: Uint8Array[] = [];
  private kept = 0;
  total = 0;
  /** Past the cap: the dropped bytes are decoded as they come, only to learn what they name. */
  private dropped: TextDecoder | null = null;
  private carry = "";
  constructor(private readonly cap: number) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    const room = Math.max(0, this.cap - this.kept);
    const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
    if (part.byteLength > 0) {
      // Copy: the stream may reuse its buffer.
      this.chunks.push(part.slice());
      this.kept += part.byteLength;
    }
    if (part.byteLength < chunk.byteLength && this.total - this.kept <= LEARN_DROPPED_MAX)
      this.learnDropped(chunk.subarray(part.byteLength));
  }

  /**
   * What a child prints past the cap is never kept, but a credential it names there
   * (`cat .env` after megabytes of events) is learned all the same, so the redaction cuts
   * it wherever it comes again (the answer a CLI job's result file gives).
   */
  private learnDropped(bytes: Uint8Array): void {
    if (!this.dropped) {
      this.dropped = new TextDecoder();
      const last = this.chunks.at(-1);
      this.carry = last ? new TextDecoder().decode(last.subarray(-LEARN_CARRY)) : "";
    }
    const text = this.carry + this.dropped.decode(bytes, { stream: true });
    learnNamed(text);
    this.carry = text.slice(-LEARN_CARRY);
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

/**
 * The jail's setup (sys/jail-net.ts) on the pipes at fds 3 and 4; on failure the group is
 * killed (bwrap never unblocked, so the command never ran).
 */
function attachTo(proc: Bun.Subprocess, net: JailNet) {
  const [info, block] = [proc.stdio[3], proc.stdio[4]];
  if (typeof info !== "number" || typeof block !== "number") throw new DlError("internal", "jail fds missing");
  return attachJail(info, block, net)
    .then((a) => {
      if (a.failed === null || a.ended) return a;
      try {
        killGroup(proc.pid, "SIGKILL");
      } catch {
        // already gone
      }
      return a;
    })
    .finally(() => closeSync(block));
}

/** The jail's own words when nothing ran: its stderr, one line, controls out, capped. */
function jailSaid(err: CaptureSink, exit: ExitInfo): string {
  const said = err
    .snapshot()
    .text()
    .replace(/[\p{Cc}\p{Cf}]+/gu, " ")
    .trim()
    .slice(0, 300);
  return said || `the jail ended (${exit.signal ?? `exit ${exit.exitCode}`}) before its command started`;
}

/** Why a jailed command never started, once its leader has exited; null when it started. */
async function setupVerdict(
  proc: Bun.Subprocess,
  exited: Promise<ExitInfo>,
  attached: ReturnType<typeof attachTo> | null,
  err: CaptureSink,
): Promise<string | null> {
  const exit = await exited;
  const a = attached ? await attached : null;
  const fd = proc.stdio[JAIL_RAN_FD];
  if (typeof fd === "number" && commandStarted(fd)) return null;
  return a?.failed && !a.ended ? a.failed : jailSaid(err, exit);
}

/**
 * stdin (`stdinFd` or none); fds 3 and 4 for the jail's set-up (bwrap), fd 5 for its
 * start (JAIL_RAN_FD), fd 6 for the start gate (START_GATE_FD).
 */
function stdioFor(
  opts: SpawnGroupOptions,
  stdinFd: number | null,
): ["ignore" | number, "pipe", "pipe", ...("pipe" | "ignore")[]] {
  const stdin = stdinFd ?? "ignore";
  if (!opts.jailNet && !opts.jailMarked && !opts.gated) return [stdin, "pipe", "pipe"];
  const net = opts.jailNet ? "pipe" : "ignore";
  const ran = opts.jailNet || opts.jailMarked ? "pipe" : "ignore";
  const fds: ["ignore" | number, "pipe", "pipe", ...("pipe" | "ignore")[]] = [stdin, "pipe", "pipe", net, net, ran];
  if (opts.gated) fds[START_GATE_FD] = "pipe";
  return fds;
}

/** The stdin file opened for the child (never through a link), or null. */
function openStdin(opts: SpawnGroupOptions): number | null {
  if (opts.stdinFile === undefined) return null;
  try {
    return openSync(opts.stdinFile, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    const errno = (e as NodeJS.ErrnoException).code ?? "unknown";
    throw new DlError("storage", `could not open the input of ${basename(opts.argv[0] ?? "")} (${errno})`, {
      path: opts.stdinFile,
    });
  }
}

/** "not_found" naming only the program, never its arguments (they may carry prompts or paths). */
function cannotStart(argv: readonly string[], errno: string): DlError {
  const program = basename(argv[0] ?? "");
  return new DlError(
    "not_found",
    `could not start ${program} (${errno}): check that it is installed and on PATH, and that the working directory exists`,
    { program, errno },
  );
}

/**
 * The command line spawned: behind the start gate, in a pid namespace of its own. A
 * gated spawn starts /bin/sh, so a program that is not there is found missing here, as
 * the spawn of the program itself would have found it.
 */
function commandOf(opts: SpawnGroupOptions): string[] {
  const cmd = opts.ownPidNamespace ? inOwnPidNamespace(opts.argv, opts.cwd) : [...opts.argv];
  if (!opts.gated) return cmd;
  if (!Bun.which(opts.argv[0] ?? "", { PATH: opts.env.PATH ?? "", cwd: opts.cwd }))
    throw cannotStart(opts.argv, "ENOENT");
  return gatedEntry(cmd);
}

/** The process itself, in a session of its own, with its stdin (if any) open; "not_found" naming only the program if it cannot start. */
function startProcess(opts: SpawnGroupOptions): Bun.Subprocess<"ignore", "pipe", "pipe"> {
  const cmd = commandOf(opts);
  const stdinFd = openStdin(opts);
  try {
    return Bun.spawn({
      cmd,
      cwd: opts.cwd,
      env: { ...opts.env },
      detached: true,
      stdio: stdioFor(opts, stdinFd),
    }) as Bun.Subprocess<"ignore", "pipe", "pipe">;
  } catch (e) {
    throw cannotStart(opts.argv, (e as NodeJS.ErrnoException).code ?? "unknown");
  } finally {
    if (stdinFd !== null) closeSync(stdinFd); // the child has its own copy
  }
}

/** dl's end of a gated child's start gate; null when not gated. The entry waits, so a missing fd kills it unrun. */
function gateOf(proc: Bun.Subprocess, opts: SpawnGroupOptions): StartGate | null {
  if (!opts.gated) return null;
  const fd = proc.stdio[START_GATE_FD];
  if (typeof fd === "number") return new StartGate(fd);
  killGroup(proc.pid, "SIGKILL");
  throw new DlError("internal", "start gate fd missing");
}

/** Starts argv in a new process group. Throws DlError "not_found" if it cannot start. */
export function spawnGroup(opts: SpawnGroupOptions): GroupChild {
  if (opts.argv.length === 0) throw new DlError("bad_input", "spawnGroup needs a command");
  const proc = startProcess(opts);
  const gate = gateOf(proc, opts);
  const out = new CaptureSink(opts.stdoutCap ?? DEFAULT_OUTPUT_CAP);
  const err = new CaptureSink(opts.stderrCap ?? DEFAULT_OUTPUT_CAP);
  const outReader = proc.stdout.getReader();
  const errReader = proc.stderr.getReader();
  const drained = Promise.all([
    pump(outReader, out, "stdout", opts.onOutput),
    pump(errReader, err, "stderr", opts.onOutput),
  ]).then(() => undefined);
  trackGroup(proc.pid);
  const attached = opts.jailNet ? attachTo(proc, opts.jailNet) : null;
  const exited = proc.exited.then((): ExitInfo => {
    attached?.then((a) => a?.release());
    // The leader is gone; background members may not be. Untrack at once when the
    // kernel knows no member (cheap: no /proc walk); otherwise whoever checks or
    // terminates the group later untracks it.
    try {
      if (!killGroup(proc.pid, 0)) untrackGroup(proc.pid);
    } catch {
      untrackGroup(proc.pid); // never ours to signal
    }
    return {
      exitCode: proc.signalCode ? null : proc.exitCode,
      signal: (proc.signalCode as NodeJS.Signals | null) ?? null,
    };
  });
  return {
    pid: proc.pid,
    pgid: proc.pid,
    exited,
    drained,
    jailSetupFailure:
      opts.jailNet || opts.jailMarked ? setupVerdict(proc, exited, attached, err) : Promise.resolve(null),
    stdout: () => out.snapshot(),
    stderr: () => err.snapshot(),
    stopCapture: () => {
      outReader.cancel().catch(() => {});
      errReader.cancel().catch(() => {});
    },
    openGate: () => gate?.open(),
    shutGate: () => gate?.shut(),
  };
}
