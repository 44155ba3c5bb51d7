import { realpathSync, statSync } from "node:fs";
import { DlError } from "../errors.ts";
import { canonicalPath, isWithin } from "../sys/paths.ts";
import { runGroup } from "../sys/process.ts";

export interface Workspace {
  /** Canonical workdir. */
  workdir: string;
  /** The per-project cap key: canonical git common dir, so linked worktrees share it. */
  project: string;
  /** One job at a time per root: the checkout/worktree top level, else the workdir. */
  root: string;
}

export interface WorkspaceGuards {
  home: string;
  /** Every provider's job-state dir (defaults and overrides), canonical. */
  stateDirs: readonly string[];
  /** Environment for `git` (PATH at least); nothing else is inherited. */
  toolEnv: Readonly<Record<string, string>>;
}

function realOrCanonical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return canonicalPath(p);
  }
}

/**
 * Canonicalises `raw` and refuses what must never be a job's workdir: a missing path,
 * `/`, $HOME, and anything overlapping a job-state dir (inside it, or holding it), so a
 * job cannot edit the queue, the slots or another job's files.
 */
export function checkWorkdir(raw: string, g: WorkspaceGuards): string {
  if (typeof raw !== "string" || raw.trim() === "" || !raw.startsWith("/")) {
    throw new DlError("bad_input", "workdir must be an absolute path to an existing directory");
  }
  let dir: string;
  try {
    dir = realpathSync(raw);
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new DlError(
      "bad_input",
      "workdir does not exist or is not a directory; create it (for example with `git worktree add`) and submit again",
    );
  }
  const home = realOrCanonical(g.home);
  if (dir === "/" || dir === home) {
    throw new DlError(
      "workdir_forbidden",
      "workdir may not be / or $HOME; pass the project checkout or a worktree of it",
      {
        failure_kind: "workdir_forbidden",
      },
    );
  }
  for (const s of g.stateDirs) {
    const state = realOrCanonical(s);
    if (isWithin(dir, state) || isWithin(state, dir)) {
      throw new DlError(
        "workdir_forbidden",
        "workdir overlaps a dl job-state directory (it is inside one or contains one); use a project checkout elsewhere",
        { failure_kind: "workdir_forbidden" },
      );
    }
  }
  return dir;
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
  return { workdir, project: realOrCanonical(common), root: realOrCanonical(top) };
}
