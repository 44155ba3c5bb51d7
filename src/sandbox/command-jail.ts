import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DlError } from "../errors.ts";
import type { DlRead } from "../sys/dl-reads.ts";
import type { JailNet } from "../sys/jail-net.ts";
import { jailPlatform, jailPolicyFor, probeJailOnce, wrapCommand } from "./index.ts";
import type { JailProbe } from "./probe.ts";
import { freshQuarantine } from "./quarantine.ts";
import type { GitTamper } from "./tree-guard.ts";
import { prepareTreeGuard, type TreeGuard } from "./tree-guard.ts";
import { type TreeReport, treeReport } from "./tree-report.ts";

/**
 * The jail for commands that are not agy (an agent's run_bash): the workdir read-write,
 * the system read-only, nothing of HOME, a private /tmp. No fallback: when the jail
 * cannot start, wrap throws and the command does not run.
 */

interface JailedCommand {
  argv: string[];
  env: Record<string, string>;
  /** Linux: pass to runGroup (the jail waits for its network and process limit). */
  jailNet: JailNet | null;
  /** Pass to runGroup: the command sits behind the start marker (sys/jail-start.ts). */
  jailMarked: true;
  /**
   * Call once the command has ended: walks the workdir again (a new `.git` or protected
   * entry is moved out and named in `tamper`), counts what changed, removes the stand-ins
   * and the run's private temporary dir (macOS). Null when there was nothing to check.
   */
  dispose(): Promise<JailCheck | null>;
}

/** What the check after a jailed command found. */
export interface JailCheck {
  tamper: GitTamper | null;
  report: TreeReport;
}

export interface CommandJail {
  wrap(argv: readonly string[], env: Readonly<Record<string, string>>, workdir: string): Promise<JailedCommand>;
}

export interface CommandJailOptions {
  platform: NodeJS.Platform;
  home: string;
  /** dl's own state dirs: never visible. */
  stateDirs: readonly string[];
  /** PATH to find bwrap on. */
  path: string;
  /** The allowlisted environment dl's own git questions run with. */
  gitEnv: Readonly<Record<string, string>>;
  /** DELEGATE_WRITABLE_TOOL_CONFIG: workdir paths a rule names that delegates may write. */
  writable?: readonly string[];
  /** What dl itself reads later (sys/dl-reads.ts): read-only where it lies inside the workdir. */
  dlReads?: readonly DlRead[];
  /** The caller's project folder (config.callerDir): the configs above the workdir count from there. */
  project?: string;
  /**
   * Where a command's moved-out entries go: a new private `<n>/` under it per command
   * (quarantine.ts). An agent job's `dl run` gets its job folder's `quarantine/`; a
   * delegation in the server, dl's own under the cache dir.
   */
  quarantineRoot: string;
  /** Tests: a scripted probe. */
  probe?: () => Promise<JailProbe>;
}

export function commandJail(o: CommandJailOptions): CommandJail {
  const probe = o.probe ?? (() => probeJailOnce({ platform: o.platform, path: o.path, cwd: "/" }));
  return {
    async wrap(argv, env, workdir) {
      const platform = jailPlatform(o.platform);
      if (!platform) {
        throw new DlError("jail_unavailable", `no jail for platform ${o.platform}; unset DELEGATE_RUN_BASH_SANDBOX`);
      }
      const p = await probe();
      const tmp = platform === "darwin" ? mkdtempSync(join(tmpdir(), "dl-bash-")) : null;
      let guard: TreeGuard | null = null;
      const dispose = async () => {
        if (tmp) rmSync(tmp, { recursive: true, force: true });
        const g = guard;
        guard = null;
        if (!g) return null;
        const verdict = await g.finish();
        return { tamper: verdict.tamper, report: treeReport(verdict, g.keptReadOnly) };
      };
      try {
        guard = await prepareTreeGuard(workdir, {
          home: o.home,
          env: o.gitEnv,
          writable: o.writable,
          dlReads: o.dlReads,
          project: o.project,
          quarantine: () => freshQuarantine(o.quarantineRoot),
        });
        const policy = jailPolicyFor(
          { platform, home: o.home, workdir, stateDirs: o.stateDirs, tmpDir: tmp ?? undefined, agyState: false },
          guard,
        );
        const wrapped = wrapCommand(policy, argv, { ...env, HOME: policy.home }, p);
        return { argv: wrapped.argv, env: wrapped.env, jailNet: wrapped.jailNet, jailMarked: true, dispose };
      } catch (e) {
        await dispose();
        throw e;
      }
    },
  };
}
