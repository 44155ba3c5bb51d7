import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { DlError } from "../errors.ts";
import { isFolder } from "../sys/file-head.ts";
import { isPackagesFolder } from "../sys/protected-names.ts";
import { namesAfterOptions, RUN_ALIASES, scriptWords } from "./pm-words.ts";

/**
 * Scripts a command runs in the packages of a workspace rather than in one folder:
 * `pnpm -r lint`, `npm run lint --workspaces`, `yarn workspaces foreach run lint`,
 * `turbo run lint test`, `lerna run lint`, `nx run-many -t lint`, and a package picked by
 * name (`yarn workspace web lint`, `pnpm --filter @acme/web lint`), which dl does not map
 * to its folder. Each such script is the command's program in every package.json of the
 * tree, one a job adds included (config-named.ts, manifest-guard.ts).
 */

/** Options that select packages by name or pattern, or all of them. */
const WIDE_FLAG = /^(-r|--recursive|--workspaces|-ws|--ws|-F|--filter|-w|--workspace)(=.*)?$/;
/** Options of these runners that take a value (skipped with it). */
const VALUED =
  /^(-F|--filter|-w|--workspace|--include|--exclude|--from|--since|--scope|--ignore|-p|--projects|--cwd|-C|--dir)$/;

/** The script names a workspace-wide command in `text` runs (npm's pre/post ones too). */
export function workspaceScriptsRun(text: string): string[] {
  const out = new Set<string>();
  for (const command of text.split(/&&|\|\||[;&|\n]/)) {
    const t = command.split(/[\s"'`()]+/).filter(Boolean);
    for (let i = 0; i < t.length; i++) for (const name of runAt(t, i)) out.add(name);
  }
  return [...out].flatMap((n) => [n, `pre${n}`, `post${n}`]);
}

/** The scripts the runner at `t[i]` runs across packages, if it is one. */
function runAt(t: readonly string[], i: number): string[] {
  const tool = basename(t[i]!);
  if (tool === "turbo") return wordsAfter(t, i + 1, ["run"]);
  if (tool === "lerna") return lernaScripts(t, i + 1);
  if (tool === "nx") return nxTargets(t, i + 1);
  if (!/^(npm|pnpm|yarn|bun)$/.test(tool)) return [];
  const rest = t.slice(i + 1);
  // yarn's `workspaces foreach` and yarn 1's `workspaces run`, `workspace <name>`; pnpm's `recursive`, `multi`, `m`.
  if (tool === "yarn" && rest[0] === "workspaces" && /^(foreach|run)$/.test(rest[1] ?? "")) return wide(t, i + 3);
  if (tool === "yarn" && rest[0] === "workspace") return wide(t, i + 3);
  if (tool === "pnpm" && /^(recursive|multi|m)$/.test(rest[0] ?? "")) return wide(t, i + 2);
  if (!rest.some((w) => WIDE_FLAG.test(w))) return [];
  return wide(t, i + 1);
}

/** The scripts named from `t[from]` (pm-words.ts scriptWords), or, for `exec`, the ones the command it runs in every package names. */
function wide(t: readonly string[], from: number): string[] {
  const words = scriptWords(t, from);
  if (words[0] !== "exec") return words.filter((w) => !RUN_ALIASES.test(w));
  return innerScripts(t, t.indexOf("exec", from) + 1);
}

/** `npm exec --ws -- npm run check`, `pnpm -r exec npm run lint`, `lerna exec -- npm run lint`: the scripts the inner command runs. */
function innerScripts(t: readonly string[], from: number): string[] {
  for (let j = from; j < t.length; j++)
    if (/^(npm|pnpm|yarn|bun)$/.test(basename(t[j]!))) return scriptWords(t, j + 1).filter((w) => !RUN_ALIASES.test(w));
  return [];
}

/** `lerna run lint`, `lerna exec -- npm run lint`. */
function lernaScripts(t: readonly string[], from: number): string[] {
  if (t[from] === "run") return scriptWords(t, from + 1);
  return t[from] === "exec" ? innerScripts(t, from + 1) : [];
}

/** The words from `t[from]` that are neither options (with their values) nor `skip`, up to the next command (turbo's tasks). */
function wordsAfter(t: readonly string[], from: number, skip: readonly string[]): string[] {
  return namesAfterOptions(t, from, { valued: VALUED, name: /^[A-Za-z0-9][\w:.-]*$/, skip });
}

/** nx's own commands: any other first word is a target (`nx lint web`). */
const NX_COMMANDS =
  /^(run|run-many|affected|graph|dep-graph|show|list|migrate|init|generate|g|add|reset|report|format|format:check|format:write|release|watch|daemon|exec|connect|connect-to-nx-cloud|view-logs|sync|sync:check|repair|import|login|logout|record|start-ci-run|fix-ci|help)$/;

/** `nx run-many -t lint,test`, `nx affected --target=lint`, `nx run app:lint`: the targets (package.json scripts, where nx infers them). */
function nxTargets(t: readonly string[], from: number): string[] {
  // `nx lint web`: a target, then a project (any first word that is none of nx's own commands).
  const first = t[from] ?? "";
  const out: string[] = first && !first.startsWith("-") && !NX_COMMANDS.test(first) ? [first] : [];
  for (let j = from; j < t.length; j++) {
    const w = t[j]!;
    const eq = /^--targets?=(.+)$/.exec(w);
    if (eq) out.push(...eq[1]!.split(","));
    else if (/^(-t|--targets?)$/.test(w) && t[j + 1]) out.push(...t[++j]!.split(","));
    else if (j === from + 1 && t[from] === "run" && w.includes(":")) out.push(w.split(":")[1]!);
  }
  return out.filter((n) => /^[A-Za-z0-9][\w:.-]*$/.test(n));
}

/** Folders of the tree read for package.json files, at most: past it, refused rather than read in part. */
const MAX_FOLDERS = 50_000;

/**
 * Every folder under `root` that holds a package.json: the packages a workspace-wide run
 * reaches. Installed packages, git metadata, nested checkouts and ignored folders are not
 * the workspace's.
 */
export function workspacePackages(root: string, ignored: (abs: string) => boolean): string[] {
  const out: string[] = [];
  const stack = [root];
  for (let seen = 0; stack.length > 0; seen++) {
    if (seen >= MAX_FOLDERS) throw tooManyFolders(root);
    const dir = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    if (names.includes("package.json")) out.push(dir);
    if (dir !== root && names.includes(".git")) continue;
    for (const n of names) {
      if (n === ".git" || isPackagesFolder(n)) continue;
      const p = join(dir, n);
      if (!ignored(p) && isFolder(p)) stack.push(p);
    }
  }
  return out;
}

function tooManyFolders(root: string): DlError {
  return new DlError(
    "bad_input",
    `${root} has more than ${MAX_FOLDERS} folders to look for the packages a workspace-wide script runs in (pnpm -r, turbo run, lerna run): dl refuses rather than read part of it; pass a smaller folder`,
    { failure_kind: "workdir_forbidden", reason: "too_large" },
  );
}
