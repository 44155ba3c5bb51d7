import { join } from "node:path";

/**
 * The git files a jailed process must not change, because git on the host obeys them
 * after the job: hooks run at the next commit, config names programs (core.hooksPath,
 * core.fsmonitor), commondir moves hooks and config to a folder the jail wrote, and a
 * renamed or rewritten `.git` swaps the whole repository. Pure: built from what
 * jailPolicyFor found on disk, so a test can lay out any repository it wants.
 *
 * Two kinds of path. Protected ones are read-only in the jail (bound read-only on Linux,
 * denied in the macOS profile); one that is absent gets a harmless stand-in before the
 * job (`placeholder`), because a missing path cannot be bound and the jail could create
 * it. Pinned ones are folders (or the `.git` file) that must not be renamed or removed:
 * bound onto themselves they become mount points, which rename(2) refuses. Everything
 * else under `.git` stays writable, since a commit writes objects, refs, logs, the index
 * and HEAD, through lock files created next to them.
 */

export interface GitControlPath {
  path: string;
  kind: "dir" | "file";
  /** Content of the stand-in created while it is absent; null: protected only if present. */
  placeholder: string | null;
}

export interface GitPin {
  path: string;
  /** A folder stays writable inside (bound read-write); the `.git` file is read-only. */
  kind: "dir" | "file";
}

/** What jailPolicyFor found about the workdir's repository. */
export interface GitLayout {
  /** What `<workdir>/.git` is on the host. */
  dotGit: "dir" | "file" | null;
  /** The common git dir (`<main>/.git`) of a linked worktree; null for a plain checkout. */
  commonDir: string | null;
  /** Names under `<common>/worktrees/` (every linked worktree of the repository). */
  worktreeNames: readonly string[];
}

export interface GitControl {
  protected: GitControlPath[];
  pinned: GitPin[];
}

/**
 * `commondir` holding "." names the git dir itself, which is what an absent one means
 * (measured with git 2.39: status, commit, gc and worktree all behave as before).
 */
const SAME_DIR = ".\n";

/** Files and folders of a common git dir that steer git on the host. */
function commonDirControl(dir: string): GitControlPath[] {
  return [
    { path: join(dir, "hooks"), kind: "dir", placeholder: "" },
    { path: join(dir, "info"), kind: "dir", placeholder: "" },
    { path: join(dir, "config"), kind: "file", placeholder: "" },
    { path: join(dir, "config.worktree"), kind: "file", placeholder: "" },
    { path: join(dir, "commondir"), kind: "file", placeholder: SAME_DIR },
  ];
}

/** A linked worktree's admin folder: commondir points git back at the common dir. */
function adminControl(admin: string): GitControlPath[] {
  return [
    { path: join(admin, "commondir"), kind: "file", placeholder: "../..\n" },
    { path: join(admin, "gitdir"), kind: "file", placeholder: null },
    { path: join(admin, "config.worktree"), kind: "file", placeholder: "" },
  ];
}

export function gitControlFor(workdir: string, layout: GitLayout): GitControl {
  const dotGit = join(workdir, ".git");
  if (layout.dotGit === null) {
    // No repository here: an empty `.git` folder (which git skips as invalid when it
    // looks for a repository) keeps the jail from creating one with hooks of its own.
    return { protected: [{ path: dotGit, kind: "dir", placeholder: "" }], pinned: [] };
  }
  const common = layout.dotGit === "dir" ? dotGit : layout.commonDir;
  const pinned: GitPin[] = [{ path: dotGit, kind: layout.dotGit }];
  const prot: GitControlPath[] = [];
  if (common) {
    prot.push(...commonDirControl(common));
    if (layout.worktreeNames.length > 0) pinned.push({ path: join(common, "worktrees"), kind: "dir" });
    for (const name of layout.worktreeNames) {
      const admin = join(common, "worktrees", name);
      pinned.push({ path: admin, kind: "dir" });
      prot.push(...adminControl(admin));
    }
  }
  return { protected: prot, pinned };
}
