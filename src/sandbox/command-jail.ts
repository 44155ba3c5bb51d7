import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DlError } from "../errors.ts";
import type { JailNet } from "../sys/jail-net.ts";
import { type GitTamper, guardGitControl } from "./git-snapshot.ts";
import { jailPlatform, jailPolicyFor, probeJailOnce, wrapCommand } from "./index.ts";
import type { JailProbe } from "./probe.ts";

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
  /**
   * Call once the command has ended: checks the git control files (a change is undone
   * and returned), removes the placeholders and the run's private temporary dir (macOS).
   */
  dispose(): GitTamper | null;
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
      let checkGit: () => GitTamper | null = () => null;
      const dispose = () => {
        if (tmp) rmSync(tmp, { recursive: true, force: true });
        return checkGit();
      };
      try {
        const policy = jailPolicyFor({
          platform,
          home: o.home,
          workdir,
          stateDirs: o.stateDirs,
          tmpDir: tmp ?? undefined,
          agyState: false,
        });
        checkGit = guardGitControl(policy).check;
        const wrapped = wrapCommand(policy, argv, { ...env, HOME: policy.home }, p);
        return { argv: wrapped.argv, env: wrapped.env, jailNet: wrapped.jailNet, dispose };
      } catch (e) {
        dispose();
        throw e;
      }
    },
  };
}
