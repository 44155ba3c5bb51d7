import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../errors.ts";
import { type DlRead, dlReadDirs } from "./dl-reads.ts";
import { isFolder, readRegularHead } from "./file-head.ts";
import {
  canonicalPath,
  isWithin,
  overlappingDir,
  protectedDirs,
  protectedDirVariable,
  type StatePaths,
} from "./paths.ts";
import { looksLikeGitDir, ruleForName } from "./protected-names.ts";

/**
 * The one check every delegated workdir passes, for agent delegations and provider jobs
 * alike: a job edits and runs commands anywhere under its workdir, so it must never be
 * handed `/`, $HOME, or a tree overlapping dl's own state (job stores, pool slots).
 */
export interface WorkdirGuard {
  home: string;
  /** Dirs no workdir may overlap (inside one, or holding one): see paths.ts protectedDirs. */
  protectedDirs: readonly string[];
  /** The variable that places a protected dir, named in the refusal so the caller can act on it. */
  variableOf?: (protectedDir: string) => string;
  /** Folders dl reads back as instructions (sys/dl-reads.ts dlReadDirs): no workdir may be one or lie inside one. */
  readDirs?: readonly DlRead[];
}

/** A refusal with what a caller needs to act on it: the workdir, why, and the variable behind the clash. */
const forbidden = (message: string, data: Record<string, string | undefined>) =>
  new DlError("workdir_forbidden", message, { ...data, failure_kind: "workdir_forbidden" });

/**
 * Resolves `path` (absolute, or relative to the current directory) through symlinks and
 * returns it, or throws: `bad_input` when it is not an existing directory,
 * `workdir_forbidden` (with `failure_kind` in the error data) when it is refused.
 */
export function checkWorkdir(path: string, g: WorkdirGuard): string {
  let dir: string;
  try {
    dir = realpathSync(path);
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new DlError(
      "bad_input",
      `workdir ${JSON.stringify(path.slice(0, 200))} does not exist or is not a directory; pass the absolute path of the project checkout (or a worktree of it), creating it first if needed`,
    );
  }
  if (dir === "/" || dir === canonicalPath(g.home)) {
    throw forbidden(
      `workdir ${dir} is refused: the job would get read/write access to all of it; pass a project directory instead`,
      { workdir: dir, reason: dir === "/" ? "root" : "home", ...(dir === "/" ? {} : { variable: "HOME" }) },
    );
  }
  refuseInsideGitDir(dir);
  refuseInsideDlReads(dir, g.readDirs ?? []);
  const protectedReal = g.protectedDirs.map((d) => canonicalPath(d));
  const clash = overlappingDir(dir, protectedReal);
  if (clash) {
    const given = g.protectedDirs.find((d) => canonicalPath(d) === clash);
    const variable = given === undefined ? undefined : g.variableOf?.(given);
    throw forbidden(
      `workdir ${dir} overlaps dl's own state (${clash}${variable ? `, placed by ${variable}` : ""}); pass a project directory elsewhere`,
      { workdir: dir, reason: "state_dir", protected_dir: clash, variable },
    );
  }
  return dir;
}

/** A folder git takes for a git dir (looksLikeGitDir). */
function isGitDir(dir: string): boolean {
  try {
    return looksLikeGitDir(readdirSync(dir));
  } catch {
    return false;
  }
}

/**
 * A workdir inside a git dir (`<repo>/.git`, a module's or worktree's admin folder, a
 * bare repository) or inside a folder the host obeys (`.claude`, `.vscode`, `.husky`):
 * every file of it is metadata or configuration, so no delegate may have it as its tree.
 */
function refuseInsideGitDir(dir: string): void {
  const parts = dir.split("/").filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const at = `/${parts.slice(0, i + 1).join("/")}`;
    if (hostCheckoutAt(parts, i)) {
      i += 1; // `.claude` and `worktrees`; the checkout's own folder and what lies below are checked as usual
      continue;
    }
    const rule = ruleForName(parts[i]!, i > 0 ? parts[i - 1]! : null);
    if (rule || isGitDir(at)) {
      throw forbidden(
        `workdir ${dir} is inside ${rule ? rule.what : "a git dir"} (${at}); pass the project's work tree instead`,
        { workdir: dir, reason: "git_dir", protected_dir: at },
      );
    }
  }
}

/**
 * `parts[i]` is the `.claude` of `<project>/.claude/worktrees/<name>`, the checkout that
 * `claude --worktree` makes, and the workdir is that checkout or lies inside it. Claude
 * Code keeps its checkouts there and reads none of them as the project's configuration
 * (its settings, agents, commands, skills, rules and hooks are other names of `.claude/`),
 * so such a checkout is a work tree like any other: its own `.claude`, `.git`, `.vscode`
 * are still protected by the jail and the write tools, relative to the workdir. Only a
 * checkout counts (its `.git` a gitfile or a git dir): any other folder there stays refused.
 */
function hostCheckoutAt(parts: readonly string[], i: number): boolean {
  if (parts[i] !== ".claude" || parts[i + 1] !== "worktrees" || parts.length < i + 3) return false;
  const checkout = `/${parts.slice(0, i + 3).join("/")}`;
  return isCheckoutRoot(checkout);
}

/** `dir` holds a `.git` that git would take: a `gitdir:` file (a linked worktree) or a git dir. */
function isCheckoutRoot(dir: string): boolean {
  const dotGit = join(dir, ".git");
  return readRegularHead(dotGit, 8) === "gitdir: " || (isFolder(dotGit) && isGitDir(dotGit));
}

/**
 * A workdir that is (or lies inside) a folder dl reads as instructions: the agent
 * definitions dir, CODEX_HOME. Every file the job wrote there would steer the next
 * delegation (a `coder.md` granted Bash), and nothing in it is the user's project.
 * (One such folder inside a workdir is kept read-only by the jail and the write tools.)
 */
function refuseInsideDlReads(dir: string, reads: readonly DlRead[]): void {
  const hit = reads.find((d) => isWithin(dir, d.path));
  if (!hit) return;
  throw forbidden(
    `workdir ${dir} is ${dir === hit.path ? "" : "inside "}the folder dl reads as ${hit.setting} (${hit.path}): a job there would rewrite what steers the next delegation; pass the project's work tree instead, or move ${hit.setting} out of it`,
    { workdir: dir, reason: "dl_reads", protected_dir: hit.path, variable: hit.setting },
  );
}

/** The guard for this configuration: its home, every protected dir and the folders dl reads. */
export function workdirGuard(p: StatePaths): WorkdirGuard {
  return {
    home: p.home,
    protectedDirs: protectedDirs(p),
    variableOf: (d) => protectedDirVariable(p, d),
    readDirs: dlReadDirs(p),
  };
}
