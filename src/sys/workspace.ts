import { canonicalPath } from "./paths.ts";
import { runGroup } from "./process.ts";
import type { WorkdirGuard } from "./workdir-guard.ts";

export interface Workspace {
  /** Canonical workdir. */
  workdir: string;
  /** The per-project cap key: canonical git common dir, so linked worktrees share it. */
  project: string;
  /** One job at a time per root: the checkout/worktree top level, else the workdir. */
  root: string;
}

/** The workdir guard plus what resolving a workspace needs. */
export interface WorkspaceGuards extends WorkdirGuard {
  /** Environment for `git` (PATH at least); nothing else is inherited. */
  toolEnv: Readonly<Record<string, string>>;
}

/** Project and workspace root of a canonical workdir, from git when it is a checkout. */
export async function resolveWorkspace(workdir: string, toolEnv: Readonly<Record<string, string>>): Promise<Workspace> {
  let out = "";
  try {
    const r = await runGroup({
      argv: ["git", "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"],
      cwd: workdir,
      env: { ...toolEnv, GIT_OPTIONAL_LOCKS: "0" },
      timeoutMs: 10_000,
      stdoutCap: 16_384,
      stderrCap: 4096,
    });
    if (r.exitCode === 0) out = r.stdout.text();
  } catch {
    // git missing: the workdir stands for both project and root.
  }
  const [common, top] = out.split("\n").map((l) => l.trim());
  if (!common || !top) return { workdir, project: workdir, root: workdir };
  return { workdir, project: canonicalPath(common), root: canonicalPath(top) };
}
