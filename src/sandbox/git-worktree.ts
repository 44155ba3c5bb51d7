import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { GitLayout } from "./git-control.ts";

/**
 * The common git dir of a linked worktree. A linked worktree's `.git` is a file
 * (`gitdir: <main>/.git/worktrees/<name>`), and that per-worktree dir holds a `commondir`
 * file pointing back to `<main>/.git`, where objects and refs live. Inside a jail that
 * shows only the workdir, git there cannot even find HEAD unless the common dir is
 * visible too. Returns null for a plain checkout (or no git at all).
 */
export function linkedWorktreeCommonDir(workdir: string): string | null {
  const dotGit = join(workdir, ".git");
  let text: string;
  try {
    if (!statSync(dotGit).isFile()) return null;
    text = readFileSync(dotGit, "utf8");
  } catch {
    return null;
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m?.[1]) return null;
  const gitDir = isAbsolute(m[1]) ? m[1] : resolve(workdir, m[1]);
  try {
    const common = readFileSync(join(gitDir, "commondir"), "utf8").trim();
    return isAbsolute(common) ? common : resolve(gitDir, common);
  } catch {
    // No commondir file: the usual layout, <main>/.git/worktrees/<name>.
    return dirname(dirname(gitDir));
  }
}

/**
 * What `<workdir>/.git` is and which linked worktrees the repository has: the admin
 * folder of each (`<common>/worktrees/<name>`) holds a `commondir` that the jail must
 * not rewrite, whichever checkout the job runs in.
 */
export function gitLayoutOf(workdir: string, commonDir: string | null): Omit<GitLayout, "commonDir"> {
  let dotGit: GitLayout["dotGit"] = null;
  try {
    const st = lstatSync(join(workdir, ".git"));
    dotGit = st.isDirectory() ? "dir" : "file";
  } catch {
    // absent: not a repository of its own
  }
  const common = dotGit === "dir" ? join(workdir, ".git") : commonDir;
  let worktreeNames: string[] = [];
  if (common) {
    try {
      worktreeNames = readdirSync(join(common, "worktrees"), { withFileTypes: true })
        .filter((e) => e.isDirectory() && !/[\x00-\x1f\x7f]/.test(e.name))
        .map((e) => e.name);
    } catch {
      // no linked worktrees
    }
  }
  return { dotGit, worktreeNames };
}
