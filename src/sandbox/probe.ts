import { describeError } from "../errors.ts";
import { INSTALL_PASTA, JAIL_BLOCK_FD, JAIL_INFO_FD } from "../sys/jail-net.ts";
import { type RunOptions, type RunResult, runGroup } from "../sys/process.ts";

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
const INSTALL_BWRAP =
  "install bubblewrap: apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap (Fedora)";
const ENABLE_USERNS =
  "enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian), or on Ubuntu 23.10+ sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile allowing bwrap); in a container, allow user namespaces (e.g. docker --security-opt seccomp=unconfined)";

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

/** bwrap's own error line, made safe to show: controls out, one line, capped. */
function oneLine(s: string): string {
  return s
    .replace(/[\p{Cc}\p{Cf}]+/gu, " ")
    .trim()
    .slice(0, 200);
}

function bwrapFix(stderr: string): string {
  const userns = /namespace|uid map|operation not permitted|permission denied|setting up/i;
  return userns.test(stderr) ? ENABLE_USERNS : "run `bwrap --unshare-all --ro-bind / / true` to see why it fails";
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
    return { kind, ok: false, detail: `${kind} could not start: ${describeError(e)}`, fix: null, bin };
  }
  if (r.exitCode === 0) return { kind, ok: true, detail: `${kind} works (${bin})`, fix: null, bin };
  const why = r.timedOut ? "timed out" : oneLine(r.stderr.text()) || `exit ${r.exitCode ?? r.signal}`;
  return { kind, ok: false, detail: `${kind} is installed but cannot start a jail: ${why}`, fix: null, bin };
}

async function probeBwrap(opts: ProbeOptions): Promise<JailProbe> {
  const bin = Bun.which("bwrap", { PATH: opts.path });
  if (!bin) return { kind: "bwrap", ok: false, detail: "bwrap not found on PATH", fix: INSTALL_BWRAP, bin: null };
  const forwarder = Bun.which("pasta", { PATH: opts.path });
  if (!forwarder) {
    const detail = "pasta (the jail's network forwarder) not found on PATH";
    return { kind: "bwrap", ok: false, detail, fix: INSTALL_PASTA, bin, forwarder: null };
  }
  // The whole start, forwarder and process limit included, around `true`.
  const args = [...BWRAP_TRIAL, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"];
  const net = { forwarder, maxProcs: TRIAL_MAX_PROCS };
  let r = await trial("bwrap", bin, args, opts, net);
  // With several jails starting at once, bwrap's loopback set-up has failed now and then
  // (RTM_NEWADDR, seen twice in ~20 parallel runs) where the next try works: a machine
  // whose jail is broken fails every try, so only a failure that repeats is reported.
  for (let again = 1; !r.ok && again < TRIAL_TRIES; again++) r = await trial("bwrap", bin, args, opts, net);
  return r.ok ? { ...r, forwarder } : { ...r, forwarder, fix: r.fix ?? bwrapFix(r.detail) };
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
