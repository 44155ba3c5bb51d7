import { describeError } from "../errors.ts";
import { INSTALL_PASTA, JAIL_BLOCK_FD, JAIL_INFO_FD } from "../sys/jail-net.ts";
import { markedEntry } from "../sys/jail-start.ts";
import { type RunOptions, type RunResult, runGroup } from "../sys/process.ts";
import { INSTALL_BWRAP, type JailCause, jailFailure } from "./jail-causes.ts";

/**
 * Can the jail start on this machine? Checked by starting a trivial command inside it:
 * bwrap can be installed and still fail (unprivileged user namespaces disabled by a
 * sysctl, AppArmor, or a container), and sandbox-exec can be broken or missing. The
 * answer names the fix, for the job that must fail closed and for `dl status`.
 */

export type JailKind = "bwrap" | "sandbox-exec" | "none";

export interface JailProbe {
  kind: JailKind;
  ok: boolean;
  /** What was found, in one line. */
  detail: string;
  /** What to do about it; null when ok. */
  fix: string | null;
  /** Why it cannot start (jail-causes.ts), when it cannot. */
  cause?: JailCause;
  /** Absolute path of the program that enforces the jail, when found. */
  bin: string | null;
  /** Linux: the network forwarder (pasta) the jail's own network namespace needs. */
  forwarder?: string | null;
}

export interface ProbeOptions {
  platform: NodeJS.Platform;
  /** PATH to search for bwrap (the caller's configured PATH). */
  path: string;
  /** Directory to run the trial in (any existing one). */
  cwd: string;
  /** Injectable for tests; the real runner by default. */
  run?: (opts: RunOptions) => Promise<RunResult>;
}

const PROBE_TIMEOUT_MS = 10_000;

/** The same isolation flags the real jail uses, around `true`. */
const BWRAP_TRIAL = [
  "--die-with-parent",
  "--unshare-all",
  "--unshare-user",
  "--disable-userns",
  "--cap-drop",
  "ALL",
  ...["--info-fd", String(JAIL_INFO_FD), "--block-fd", String(JAIL_BLOCK_FD)],
];
/** Processes the trial may start (it starts one). */
const TRIAL_MAX_PROCS = 16;
/** How often a failed trial is run before the jail is called unusable. */
const TRIAL_TRIES = 3;

/** A failed trial's answer: its detail, and the cause and fix jail-causes.ts reads from it. */
function failedTrial(kind: JailKind, bin: string, detail: string): JailProbe {
  const f = kind === "bwrap" ? jailFailure(detail) : null;
  return { kind, ok: false, detail, fix: f?.fix ?? null, cause: f?.cause ?? "sandbox_exec", bin };
}

async function trial(
  kind: JailKind,
  bin: string,
  args: string[],
  opts: ProbeOptions,
  jailNet?: RunOptions["jailNet"],
): Promise<JailProbe> {
  const run = opts.run ?? runGroup;
  let r: RunResult;
  try {
    const env = { PATH: opts.path };
    r = await run({ argv: [bin, ...args], cwd: opts.cwd, env, timeoutMs: PROBE_TIMEOUT_MS, jailNet });
  } catch (e) {
    return failedTrial(kind, bin, `${kind} could not start: ${describeError(e)}`);
  }
  if (r.exitCode === 0 && !r.jailSetupFailure)
    return { kind, ok: true, detail: `${kind} works (${bin})`, fix: null, bin };
  // bwrap: what its set-up said, known out of band; sandbox-exec: its own stderr.
  const said =
    r.jailSetupFailure ??
    r.stderr
      .text()
      .replace(/[\p{Cc}\p{Cf}]+/gu, " ")
      .trim()
      .slice(0, 200);
  const why = r.timedOut ? "timed out" : said || `exit ${r.exitCode ?? r.signal}`;
  return failedTrial(kind, bin, `${kind} is installed but cannot start a jail: ${why}`);
}

async function probeBwrap(opts: ProbeOptions): Promise<JailProbe> {
  const bin = Bun.which("bwrap", { PATH: opts.path });
  if (!bin) {
    return {
      kind: "bwrap",
      ok: false,
      detail: "bwrap not found on PATH",
      fix: INSTALL_BWRAP,
      cause: "no_bwrap",
      bin: null,
    };
  }
  const forwarder = Bun.which("pasta", { PATH: opts.path });
  if (!forwarder) {
    const detail = "pasta (the jail's network forwarder) not found on PATH";
    return { kind: "bwrap", ok: false, detail, fix: INSTALL_PASTA, cause: "no_pasta", bin, forwarder: null };
  }
  // The whole start, forwarder, process limit and start marker included, around `true`.
  const args = [...BWRAP_TRIAL, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", ...markedEntry(["true"])];
  const net = { forwarder, maxProcs: TRIAL_MAX_PROCS };
  let r = await trial("bwrap", bin, args, opts, net);
  // With several jails starting at once, bwrap's loopback set-up has failed now and then
  // (RTM_NEWADDR, seen twice in ~20 parallel runs) where the next try works: a machine
  // whose jail is broken fails every try, so only a failure that repeats is reported. A
  // failure jail-causes.ts names (no user namespaces, no tun device, an unwritable TMPDIR…)
  // is how this machine is set up, and a second try would only say it again.
  for (let again = 1; !r.ok && r.cause === "other" && again < TRIAL_TRIES; again++)
    r = await trial("bwrap", bin, args, opts, net);
  return { ...r, forwarder };
}

async function probeSandboxExec(opts: ProbeOptions): Promise<JailProbe> {
  const bin = "/usr/bin/sandbox-exec";
  const r = await trial("sandbox-exec", bin, ["-p", "(version 1)(allow default)", "/usr/bin/true"], opts);
  if (r.ok) return r;
  return { ...r, fix: "sandbox-exec ships with macOS: check that /usr/bin/sandbox-exec exists and runs" };
}

export async function probeJail(opts: ProbeOptions): Promise<JailProbe> {
  if (opts.platform === "linux") return probeBwrap(opts);
  if (opts.platform === "darwin") return probeSandboxExec(opts);
  return {
    kind: "none",
    ok: false,
    detail: `no jail for platform ${opts.platform}`,
    fix: "run Gemini jobs on Linux (bubblewrap) or macOS (sandbox-exec)",
    bin: null,
  };
}
