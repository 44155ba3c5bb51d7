import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type GitTamper,
  type JailPolicy,
  prepareTreeGuard,
  type TreeGuard,
  type TreeVerdict,
  wrapCommand,
} from "../../src/sandbox/index.ts";
import { type JailProbe, probeJail } from "../../src/sandbox/probe.ts";
import { freshQuarantine } from "../../src/sandbox/quarantine.ts";
import { type RunOptions, type RunResult, runGroup } from "../../src/sys/process.ts";

/**
 * Is the real jail usable here? Locally a machine without bwrap (or with user namespaces
 * off) skips the jail tests; in CI (`CI` set) they run anyway and fail, so a CI image that
 * lost bubblewrap cannot turn the suite green by skipping the tests that matter most.
 */
const IN_CI = Boolean(process.env.CI);

export const linuxProbe: JailProbe | null =
  process.platform === "linux"
    ? await probeJail({ platform: "linux", path: process.env.PATH ?? "/usr/bin:/bin", cwd: tmpdir() })
    : null;

/** Skip the real-bwrap tests: not Linux, or no usable jail outside CI. */
export const skipBwrap = process.platform !== "linux" || (!linuxProbe?.ok && !IN_CI);

/** The probe's answer, or a failing one that says why (the tests then fail with it). */
export function requireLinuxProbe(): JailProbe {
  return linuxProbe ?? { kind: "bwrap", ok: false, detail: "not Linux", fix: null, bin: null };
}

/**
 * A command in the real jail as dl runs it: the tree guard (what git says, the walk, the
 * stand-ins), the wrap, the forwarder and process limit attached, the walk after the run.
 * `policy` builds the job's policy around the guard (its workdir must be canonical).
 */
export async function runInJail(
  policy: (guard?: TreeGuard) => JailPolicy,
  argv: string[],
  env: Record<string, string>,
  extra: Partial<RunOptions> = {},
): Promise<{ run: RunResult; tamper: GitTamper | null; verdict: TreeVerdict }> {
  const bare = policy();
  const quarantine = () => freshQuarantine(mkdtempSync(join(tmpdir(), "dl-test-quarantine-")));
  const guard = await prepareTreeGuard(bare.workdir, { home: bare.home, env, quarantine });
  let verdict: TreeVerdict | null = null;
  try {
    const p = policy(guard);
    const wrapped = wrapCommand(p, argv, env, requireLinuxProbe());
    const run = await runGroup({
      argv: wrapped.argv,
      cwd: p.workdir,
      env: wrapped.env,
      jailNet: wrapped.jailNet ?? undefined,
      ...extra,
    });
    verdict = await guard.finish();
    return { run, tamper: verdict.tamper, verdict };
  } finally {
    if (!verdict) await guard.finish();
  }
}
