import { dirname, join, resolve } from "node:path";
import { DlError } from "../errors.ts";
import { isRegularFile } from "../sys/file-head.ts";
import { GIT_CONFIG_SOURCE } from "../sys/git-config-env.ts";
import { landingPath, resolveUserPath } from "../sys/paths.ts";
import { type RunOptions, type RunResult, runGroup } from "../sys/process.ts";
import { withUnreadIncludes } from "./git-unread-includes.ts";

/**
 * What git itself says about one repository, asked before a job (never after one: a
 * job's changes are inspected by dl first, so dl's own git call cannot be what runs a
 * planted program). Where its git dir and common dir are, and every file or folder its
 * configuration names, in every scope and through every include: the hooks dir
 * (`core.hooksPath`), included config files, and any path-like value (a `core.fsmonitor`
 * script, a filter driver, an editor) — a file git runs or reads that a delegate could
 * rewrite if it sat in the work tree. Plus the folders git ignores there, which are not
 * the project's configuration (dependencies, build output).
 */

export interface RepoFacts {
  /** The repository's git dir and common dir (absolute). */
  gitDir: string;
  commonDir: string;
  /** The work tree's root; null for a bare repository. */
  toplevel: string | null;
  /** `dir` is inside the git dir itself (`<repo>/.git/…`) or is a bare repository. */
  insideGitDir: boolean;
  /** Hook folders git runs from: `core.hooksPath` in any scope, resolved. */
  hooksDirs: string[];
  /** Files and folders the configuration names (config files, includes, path-like values). */
  named: string[];
  /** Every config file git read (each scope, each include), for what its values run (git-runs.ts). */
  configFiles: string[];
  /** The config files it includes (`include.path`, `includeIf.*.path`), resolved; git reads them at every command, present or not. */
  includes: string[];
  /** Ignored folders of the work tree (absolute). */
  ignoredDirs: string[];
  /** The home git was asked with: `~/` in what its hooks and config run resolves there. */
  home: string;
}

export interface GitAsk {
  env: Readonly<Record<string, string>>;
  run?: (opts: RunOptions) => Promise<RunResult>;
}

const TIMEOUT_MS = 10_000;

/**
 * git could not answer about a repository it was asked about (it timed out, or failed on
 * a repository it can read): what git would run there is unknown, so the guard cannot be
 * planned and the job or write is refused, never planned as if git had named nothing.
 */
function unanswered(dir: string, args: readonly string[], why: string): DlError {
  return new DlError(
    "bad_input",
    `git did not answer about the repository at ${dir} (git ${args[0]}: ${why}); dl keeps what git runs read-only only by asking git, so nothing runs there until git answers (check the repository's and your git configuration with git -C ${dir} status)`,
    { failure_kind: "jail_git_config", reason: "git_unanswered" },
  );
}

/** git's own words for a folder in no repository: the one failure that is an answer. */
const NOT_A_REPOSITORY = /not a git repository/i;

/**
 * git's output, or null when `dir` is in no repository (asked with `notRepoIsNull`) or
 * no git is on PATH (then nothing here can run git either). Any other failure throws.
 */
async function git(dir: string, args: string[], o: GitAsk, notRepoIsNull = false): Promise<string | null> {
  const run = o.run ?? runGroup;
  // GIT_* of the caller never steer where dl asks (a GIT_DIR would point git elsewhere);
  // the config sources the user's git reads (GIT_CONFIG_GLOBAL, …) are read as it reads them.
  const env = Object.fromEntries(
    Object.entries(o.env).filter(([k]) => !k.startsWith("GIT_") || GIT_CONFIG_SOURCE.test(k)),
  );
  let r: RunResult;
  try {
    r = await run({ argv: ["git", ...args], cwd: dir, env, timeoutMs: TIMEOUT_MS, stdoutCap: 8 << 20 });
  } catch {
    return null; // no git on PATH: nothing here can ask it either
  }
  if (r.timedOut || r.aborted) throw unanswered(dir, args, `no answer within ${TIMEOUT_MS / 1000} s`);
  if (r.exitCode === 0) return r.stdout.text();
  const said = r.stderr.text().trim();
  if (notRepoIsNull && NOT_A_REPOSITORY.test(said)) return null;
  throw unanswered(dir, args, said.split("\n").at(-1)?.slice(0, 200) || `exit ${r.exitCode}`);
}

/** `git config --list --show-origin -z`: `file:<path>\0<key>\n<value>\0` per entry. */
export function parseConfigList(text: string): { origin: string | null; key: string; value: string }[] {
  const parts = text.split("\0");
  const out: { origin: string | null; key: string; value: string }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const origin = parts[i]!.startsWith("file:") ? parts[i]!.slice(5) : null;
    const kv = parts[i + 1]!;
    const nl = kv.indexOf("\n");
    out.push({ origin, key: (nl < 0 ? kv : kv.slice(0, nl)).toLowerCase(), value: nl < 0 ? "" : kv.slice(nl + 1) });
  }
  return out;
}

/** Words of a config value that name a file: `./x`, `../x`, `/x`, `~/x`, `a/b` (not a URL, not an option). */
export function pathWords(value: string): string[] {
  return value
    .split(/[\s"'=;|&()<>]+/)
    .map((w) => w.replace(/^!/, ""))
    .filter((w) => w !== "" && !w.startsWith("-") && !w.includes("://") && /^(\.{1,2}\/|\/|~\/)|\//.test(w));
}

/** A word with no slash that looks like a file name (`conv.sh`, `.fsmon.py`), not an address or a number. */
const FILE_NAME = /^\.?[\w+-]+(\.[\w+-]+)*\.[A-Za-z][\w]*$/;

/**
 * Words with no slash that git would still find at `base`: a command such as
 * `sh conv.sh` or `node clean.js` runs from the work tree's root, so `conv.sh` is a file
 * of the tree (present or created by a job) as much as `./conv.sh` is. A word that looks
 * like a file name counts, and any word that is a file there now.
 */
function bareFileWords(value: string, base: string): string[] {
  return value
    .split(/[\s"'=;|&()<>`]+/)
    .map((w) => w.replace(/^!/, ""))
    .filter((w) => w !== "" && !w.startsWith("-") && !w.includes("/") && !w.includes(":") && !w.includes("@"))
    .filter((w) => w !== "." && w !== ".." && (FILE_NAME.test(w) || isRegularFile(join(base, w))));
}

/** Everything the configuration names, and the hooks dirs, resolved the way git resolves them. */
export function namedByConfig(
  entries: ReturnType<typeof parseConfigList>,
  where: { toplevel: string | null; gitDir: string; home: string },
): { hooksDirs: string[]; named: string[]; includes: string[]; configFiles: string[] } {
  const base = where.toplevel ?? where.gitDir;
  const hooksDirs: string[] = [];
  const configFiles = new Set<string>();
  const includes: string[] = [];
  const named = new Set<string>();
  for (const e of entries) {
    if (e.origin) named.add(resolve(base, e.origin));
    if (e.origin) configFiles.add(resolve(base, e.origin));
    if (e.key === "core.hookspath" && e.value) hooksDirs.push(resolveUserPath(e.value, base, where.home));
    // An include's path is relative to the file that holds it; other values to the work tree.
    const isInclude = /^include(if\..*)?\.path$/.test(e.key);
    const from = isInclude && e.origin ? dirname(resolve(base, e.origin)) : base;
    const words = isInclude ? [e.value] : [...pathWords(e.value), ...bareFileWords(e.value, base)];
    for (const w of words) if (w) named.add(resolveUserPath(w, from, where.home));
    if (isInclude && e.value) includes.push(resolveUserPath(e.value, from, where.home));
  }
  // git opens each path through the kernel, which follows links: a file or hooks dir of the
  // home whose folder links into a checkout (dotfiles kept in a repository) is that checkout's.
  const landed = (paths: Iterable<string>) => [...new Set([...paths].flatMap((p) => [p, landingPath(p)]))];
  return {
    hooksDirs: landed(hooksDirs),
    named: landed(named),
    includes: landed(includes),
    configFiles: landed(configFiles),
  };
}

/** The repository `dir` belongs to, as git sees it from there; null when it is in none. */
export async function askGit(dir: string, home: string, o: GitAsk): Promise<RepoFacts | null> {
  const revs = await git(
    dir,
    ["rev-parse", "--absolute-git-dir", "--git-common-dir", "--is-inside-git-dir", "--is-bare-repository"],
    o,
    true,
  );
  if (revs === null) return null;
  const [gitDir, common, insideGit, bare] = revs.split("\n");
  if (!gitDir || !common) return null;
  const insideGitDir = insideGit === "true" || bare === "true";
  const toplevel = insideGitDir ? null : ((await git(dir, ["rev-parse", "--show-toplevel"], o))?.trim() ?? null);
  const config = await git(dir, ["config", "--list", "--show-origin", "-z"], o);
  const where = { toplevel, gitDir, home };
  const { hooksDirs, named, includes, configFiles } = withUnreadIncludes(
    namedByConfig(parseConfigList(config ?? ""), where),
    (entries) => namedByConfig(entries, where),
  );
  const ignored = toplevel
    ? await git(toplevel, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], o)
    : null;
  const ignoredDirs = (ignored ?? "")
    .split("\0")
    .filter((p) => p.endsWith("/"))
    .map((p) => resolve(toplevel!, p));
  const commonDir = resolve(dir, common);
  return { gitDir, commonDir, toplevel, insideGitDir, hooksDirs, named, includes, configFiles, ignoredDirs, home };
}
