import { closeSync } from "node:fs";
import { basename } from "node:path";
import { DlError } from "../errors.ts";
import { trackGroup, untrackGroup } from "./group-registry.ts";
import { attachJail, type JailNet } from "./jail-net.ts";
import { killGroup } from "./process-group.ts";

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
   * is killed and stderr says why.
   */
  jailNet?: JailNet;
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
  /** True once known that the jail's set-up failed, so its command never ran (false without a jail). */
  jailSetupFailed: Promise<boolean>;
}

const DEFAULT_OUTPUT_CAP = 1024 * 1024;

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

/**
 * The jail's setup (sys/jail-net.ts) on the pipes at fds 3 and 4; on failure the group is
 * killed (bwrap never unblocked, so the command never ran) and stderr says why.
 */
function attachTo(proc: Bun.Subprocess, net: JailNet, err: CaptureSink) {
  const [info, block] = [proc.stdio[3], proc.stdio[4]];
  if (typeof info !== "number" || typeof block !== "number") throw new DlError("internal", "jail fds missing");
  return attachJail(info, block, net)
    .then((a) => {
      if (a.failed === null || a.ended) return a;
      err.push(new TextEncoder().encode(`dl: ${a.failed}\n`));
      try {
        killGroup(proc.pid, "SIGKILL");
      } catch {
        // already gone
      }
      return a;
    })
    .finally(() => closeSync(block));
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
      stdio: opts.jailNet ? ["ignore", "pipe", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
    }) as Bun.Subprocess<"ignore", "pipe", "pipe">;
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
  trackGroup(proc.pid);
  const attached = opts.jailNet ? attachTo(proc, opts.jailNet, err) : null;
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
    jailSetupFailed: attached ? attached.then((a) => a.failed !== null && !a.ended) : Promise.resolve(false),
    stdout: () => out.snapshot(),
    stderr: () => err.snapshot(),
    stopCapture: () => {
      outReader.cancel().catch(() => {});
      errReader.cancel().catch(() => {});
    },
  };
}
