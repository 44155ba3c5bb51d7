import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Config } from "../../../config.ts";
import { DlError, isDlError } from "../../../errors.ts";
import {
  checkGitConfig,
  ensureAgyStateDirs,
  type GitGuardResult,
  type JailPlatform,
  type JailPolicy,
  type JailProbe,
  jailPlatform,
  jailPolicyFor,
  prepareTreeGuard,
  probeJailOnce,
  type TreeGuard,
  treeReport,
  wrapCommand,
} from "../../../sandbox/index.ts";
import type { JobRow } from "../../../store/types.ts";
import type { DlRead } from "../../../sys/dl-reads.ts";
import { isWithin } from "../../../sys/paths.ts";
import { privateDir } from "../../../sys/private-file.ts";
import type { LaunchSpec, RunCheck } from "../../engine/provider.ts";
import { agyArgv } from "./task.ts";

/**
 * How one Gemini job starts: `agy -p …` inside the jail, always. Every refusal here ends
 * the job before anything runs, with a failure_kind the caller can act on:
 * `jail_unavailable` (the fix is named) or `jail_git_config` (the hint is named). After
 * the run, a change to the git control files fails it `jail_git_tampered` (restored).
 */

/** This machine's jail probe, as Gemini jobs and `dl status` run it (remembered once it succeeds). */
export function geminiJailProbe(c: Pick<Config, "childEnv">): Promise<JailProbe> {
  return probeJailOnce({ platform: process.platform, path: c.childEnv.PATH ?? "", cwd: "/" });
}

export interface GeminiJailInputs {
  platform: NodeJS.Platform;
  /** The user's home: hidden in the jail but for agy's own state. */
  home: string;
  /** dl's state dirs (every provider's jobs, the pool cache): never visible. */
  stateDirs: readonly string[];
  /** The allowlisted child environment (config.childEnv). */
  childEnv: Readonly<Record<string, string>>;
  /** What dl's own git questions run with (config.gitAskEnv); the child env when absent. */
  gitAskEnv?: Readonly<Record<string, string>>;
  /** This machine's jail probe (remembered once it succeeds). */
  probe: () => Promise<JailProbe>;
  /** DELEGATE_WRITABLE_TOOL_CONFIG: workdir paths a rule names that delegates may write. */
  writable?: readonly string[];
  /** What dl itself reads later (sys/dl-reads.ts): read-only where it lies inside the workdir. */
  dlReads?: readonly DlRead[];
  /** The caller's project folder (config.callerDir): the configs above the workdir count from there. */
  project?: string;
  /** Tests: a scripted git config check. */
  gitGuard?: (policy: JailPolicy, env: Readonly<Record<string, string>>) => Promise<GitGuardResult>;
}

function jailRefused(message: string, fix: string | null): DlError {
  return new DlError("jail_unavailable", message, { failure_kind: "jail_unavailable", fix });
}

/**
 * The binary's own directory, read-only: agy is not always under a system path
 * (~/.local/bin, a checkout). Never HOME itself or anything holding it.
 */
function binReadPaths(bin: string, home: string): string[] {
  const dir = dirname(bin);
  if (isWithin(home, dir)) {
    throw new DlError(
      "bad_config",
      `agy sits in ${dir}, which holds the home directory; move it (or point DELEGATE_AGY_BIN) to its own directory`,
    );
  }
  return [dir];
}

function requirePlatform(p: NodeJS.Platform): JailPlatform {
  const platform = jailPlatform(p);
  if (!platform) {
    throw jailRefused(
      `no jail for platform ${p}, so nothing runs`,
      "run Gemini jobs on Linux (bubblewrap) or macOS (sandbox-exec)",
    );
  }
  return platform;
}

function policyFor(job: JobRow, bin: string, o: GeminiJailInputs, guard: TreeGuard, jobDir: string): JailPolicy {
  const platform = requirePlatform(o.platform);
  return jailPolicyFor(
    {
      platform,
      home: o.home,
      workdir: job.workdir,
      stateDirs: o.stateDirs,
      // macOS has no private /tmp mount: each run gets its own temporary dir (outside dl's
      // state, which the jail hides). Linux mounts a fresh tmpfs on /tmp instead.
      tmpDir: platform === "darwin" ? mkdtempSync(join(tmpdir(), "dl-agy-")) : undefined,
      extraReadPaths: binReadPaths(bin, o.home),
      // What agy keeps and reads back (plans, context, conversations, cache) is this job's
      // own, kept in its folder: never the host's agy state or the next job's.
      agyStateDir: join(jobDir, "agy-state"),
    },
    guard,
  );
}

export async function buildGeminiLaunch(
  job: JobRow,
  bin: string,
  o: GeminiJailInputs,
  ctx: { jobDir: string },
): Promise<LaunchSpec> {
  requirePlatform(o.platform);
  const probe = await o.probe();
  if (!probe.ok) {
    const fix = probe.fix ? `; fix: ${probe.fix}` : "";
    throw jailRefused(`the jail cannot start, so agy did not run: ${probe.detail}${fix}`, probe.fix);
  }
  // What git and the tree say before the job; the stand-ins must exist to be bound.
  const guard = await prepareTreeGuard(realWorkdir(job.workdir), {
    home: o.home,
    env: o.gitAskEnv ?? o.childEnv,
    writable: o.writable,
    dlReads: o.dlReads,
    project: o.project,
    quarantine: () => {
      // One run per job: its own folder's quarantine/, private (it is listed by dl show).
      const dir = join(ctx.jobDir, "quarantine");
      privateDir(dir, ctx.jobDir);
      return dir;
    },
  });
  const afterRun = async (): Promise<RunCheck> => {
    const verdict = await guard.finish();
    return { failure: verdict.tamper, changes: { ...treeReport(verdict, guard.keptReadOnly) } };
  };
  try {
    const policy = policyFor(job, bin, o, guard, ctx.jobDir);
    // Asked as the tree guard asks: with the config sources the user's git reads.
    const check = await (o.gitGuard ?? ((p, env) => checkGitConfig(p, { env })))(policy, o.gitAskEnv ?? o.childEnv);
    if (!check.ok) {
      throw new DlError("bad_input", `${check.message} (hint: ${check.hint})`, {
        failure_kind: check.failure_kind,
        hint: check.hint,
      });
    }
    // Before wrapping: the compiler binds only state dirs that exist on the host.
    ensureAgyStateDirs(policy);
    const env = { ...o.childEnv, HOME: policy.home };
    const wrapped = wrapCommand(policy, agyArgv(bin, job), env, probe);
    return {
      argv: wrapped.argv,
      env: wrapped.env,
      cwd: policy.workdir,
      jailNet: wrapped.jailNet,
      jailMarked: true,
      afterRun,
    };
  } catch (e) {
    await afterRun();
    if (isDlError(e, "jail_unavailable")) throw jailRefused(e.message, probe.fix);
    throw e;
  }
}

function realWorkdir(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
