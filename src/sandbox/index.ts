import { mkdirSync, realpathSync } from "node:fs";
import { DlError } from "../errors.ts";
import { INSTALL_PASTA, type JailNet } from "../sys/jail-net.ts";
import { markedEntry } from "../sys/jail-start.ts";
import { bwrapPrefix, type FsView, hostFs, jailEnv } from "./bwrap.ts";
import { buildJailPolicy, type JailPlatform, type JailPolicy, type JailPolicyInput } from "./policy.ts";
import { type JailKind, type JailProbe, type ProbeOptions, probeJail } from "./probe.ts";
import { sandboxExecPrefix } from "./sandbox-exec.ts";
import type { TreeGuard } from "./tree-guard.ts";

/**
 * The jail as the rest of dl sees it: build the policy for a job, check that the jail can
 * start here, and turn a command into the same command inside the jail. Fail closed: with
 * no usable jail nothing is wrapped, so nothing runs.
 */

export {
  checkGitConfig,
  type GitGuardResult,
  JAIL_GIT_HINT,
} from "./git-guard.ts";
export type { JailPlatform, JailPolicy, JailPolicyInput } from "./policy.ts";
export type { JailProbe } from "./probe.ts";
export { pruneQuarantine } from "./quarantine.ts";
export {
  type GitTamper,
  prepareTreeGuard,
  type TreeGuard,
  type TreeVerdict,
} from "./tree-guard.ts";
export { readTreeReport, treeReport, treeReportLines } from "./tree-report.ts";

export interface WrappedCommand {
  argv: string[];
  /** Environment for the wrapper process itself. */
  env: Record<string, string>;
  kind: JailKind;
  /** Linux: what to attach while bwrap waits (spawn with runGroup's `jailNet`). */
  jailNet: JailNet | null;
  /**
   * Always true: the command sits behind sys/jail-start.ts's entry, so runGroup (given
   * `jailNet` or `jailMarked`) knows out of band whether it ever started.
   */
  jailMarked: true;
}

const KIND_FOR: Record<JailPlatform, JailKind> = { linux: "bwrap", darwin: "sandbox-exec" };

export function jailPlatform(platform: NodeJS.Platform): JailPlatform | null {
  return platform === "linux" || platform === "darwin" ? platform : null;
}

/**
 * A policy from a job's paths: canonical paths (sandbox rules and mounts compare real
 * paths; on macOS /var and /tmp are links into /private), and what the tree guard keeps
 * read-only (see tree-guard.ts; the caller prepares it on the same canonical workdir).
 */
export function jailPolicyFor(
  input: Omit<JailPolicyInput, "protectedPaths" | "gitDirsOutside">,
  guard?: Pick<TreeGuard, "protectedPaths" | "gitDirsOutside">,
): JailPolicy {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p; // not there yet (agy state, an optional path): compared as given
    }
  };
  const workdir = real(input.workdir);
  return buildJailPolicy({
    ...input,
    home: real(input.home),
    workdir,
    tmpDir: input.tmpDir ? real(input.tmpDir) : undefined,
    stateDirs: input.stateDirs.map(real),
    protectedPaths: guard?.protectedPaths ?? [],
    gitDirsOutside: (guard?.gitDirsOutside ?? []).map(real),
  });
}

/**
 * agy's writable state dirs must exist before the jail starts: the compiler binds only
 * what exists (macOS: the user's own; Linux: the job's own copy, see policy.ts). The
 * workdir and extra paths are the caller's to create.
 */
export function ensureAgyStateDirs(policy: JailPolicy): void {
  for (const p of policy.writable) {
    if (p.startsWith(`${policy.home}/.gemini/`)) mkdirSync(p, { recursive: true, mode: 0o700 });
  }
  for (const b of policy.stateBinds) mkdirSync(b.source, { recursive: true, mode: 0o700 });
}

/**
 * argv as run inside the jail. `probe` is this machine's answer from probeJail(); an
 * unusable jail (or one for another platform) throws, naming the fix.
 */
export function wrapCommand(
  policy: JailPolicy,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  probe: JailProbe,
  fs: FsView = hostFs,
): WrappedCommand {
  const kind = KIND_FOR[policy.platform];
  if (!probe.ok || probe.kind !== kind || !probe.bin) {
    const fix = probe.fix ? `; fix: ${probe.fix}` : "";
    throw new DlError("jail_unavailable", `the jail cannot start, so nothing runs: ${probe.detail}${fix}`, {
      kind,
      fix: probe.fix,
    });
  }
  if (argv.length === 0) throw new DlError("bad_input", "wrapCommand needs a command");
  if (kind === "bwrap") {
    // bwrap is started with exactly `env` and hands it to the command: in its argv the
    // values would be readable by every local user (/proc/<pid>/cmdline).
    if (!probe.forwarder) {
      throw new DlError(
        "jail_unavailable",
        `the jail cannot start, so nothing runs: no network forwarder; fix: ${INSTALL_PASTA}`,
        {
          kind,
          fix: INSTALL_PASTA,
        },
      );
    }
    const jailNet = { forwarder: probe.forwarder, maxProcs: policy.maxProcs };
    const jailed = [probe.bin, ...bwrapPrefix(policy, fs), ...markedEntry(argv)];
    return { argv: jailed, env: jailEnv(env), kind, jailNet, jailMarked: true };
  }
  // sandbox-exec passes its environment on; temporaries go to the run's own dir.
  const tmp: Record<string, string> = policy.tmpDir ? { TMPDIR: policy.tmpDir } : {};
  const jailed = [probe.bin, ...sandboxExecPrefix(policy), ...markedEntry(argv)];
  return { argv: jailed, env: { ...env, ...tmp }, kind, jailNet: null, jailMarked: true };
}

const okProbes = new Map<string, JailProbe>();

/** probeJail, remembered once it succeeds (a failure is asked again: the user may fix it). */
export async function probeJailOnce(opts: ProbeOptions): Promise<JailProbe> {
  const key = `${opts.platform}\0${opts.path}`;
  const known = okProbes.get(key);
  if (known) return known;
  const probe = await probeJail(opts);
  if (probe.ok) okProbes.set(key, probe);
  return probe;
}
