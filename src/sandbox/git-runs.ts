import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readRegularHead } from "../sys/file-head.ts";
import { isWithin } from "../sys/paths.ts";
import { type NamedByConfig, type NamedOptions, namedByText, namedByToolConfig } from "./config-named.ts";
import { gitConfigText } from "./git-config-text.ts";
import type { RepoFacts } from "./git-reach.ts";

/**
 * The files of the work tree that git itself runs through its hooks and its
 * configuration: a hook that is a link to `scripts/pre-commit` (the usual `make hooks`),
 * a hook that says `exec sh scripts/check.sh`, a `core.fsmonitor` script that runs
 * `./tools/watch.sh`. The hooks and the config are read-only to delegates; what they run
 * of the tree must be too, or a delegate rewrites the script and the user's next commit
 * or `git status` runs it all the same. Read the way config-named.ts reads a protected
 * configuration (words that name files, links followed, to the end of the chain), from the
 * work tree's root, where git runs hooks and drivers.
 */

/** Names git never runs from a hooks dir (the samples `git init` copies). */
const NOT_RUN = /\.sample$/;

/** Every hook entry git may run: the hooks dirs of `core.hooksPath`, and the common dir's own. */
function hookEntries(repo: RepoFacts): string[] {
  const dirs = new Set([...repo.hooksDirs, join(repo.commonDir, "hooks")]);
  const out: string[] = [];
  for (const d of dirs) {
    try {
      for (const n of readdirSync(d)) if (!NOT_RUN.test(n)) out.push(join(d, n));
    } catch {
      // no hooks dir: git runs nothing from it
    }
  }
  return out;
}

/** Files inside `tree` that `repo`'s hooks and config files run, and the folders their Python commands import from first (absolute). */
export function runByGit(repo: RepoFacts, tree: string, ignored: (abs: string) => boolean): ByGit {
  const project = repo.toplevel ?? repo.gitDir;
  const out = new Set<string>();
  const py = { roots: new Set<string>(), pythons: new Set<string>(), pyNames: new Set<string>() };
  const keys: ByGit["manifestKeys"] = [];
  const wide = new Set<string>();
  const o: NamedOptions = { workdir: tree, ignored, home: repo.home };
  const configs = repo.configFiles.map((f) => namedByGitConfig(f, o, project));
  for (const named of [...hookEntries(repo).map((h) => namedByToolConfig(h, o, project)), ...configs]) {
    for (const f of named.files) if (f !== tree && isWithin(f, tree)) out.add(f);
    for (const r of named.importRoots) if (isWithin(r, tree)) py.roots.add(r);
    for (const i of named.pythons) py.pythons.add(i);
    for (const n of named.pyNames) py.pyNames.add(n);
    // `npm run lint` in a hook: the script it runs is the hook's program, like a file it names.
    keys.push(...named.npmScripts.map((x) => ({ pkg: x.pkg, key: `scripts.${x.name}` })), ...named.manifestKeys);
    for (const n of named.wideScripts) wide.add(n);
  }
  return {
    files: [...out],
    importRoots: [...py.roots],
    pythons: [...py.pythons],
    pyNames: [...py.pyNames],
    manifestKeys: keys.filter((k) => isWithin(k.pkg, tree)),
    wideScripts: [...wide],
  };
}

/** As much of a git config file as the walk reads of any file (config-named.ts's head). */
const MAX_CONFIG_BYTES = 256 * 1024;

/** What a git config file runs, read as git reads its values (gitConfigText); a link (its target named too) as any configuration is. */
function namedByGitConfig(file: string, o: NamedOptions, project: string): NamedByConfig {
  const text = readRegularHead(file, MAX_CONFIG_BYTES);
  return text === null ? namedByToolConfig(file, o, project) : namedByText(file, gitConfigText(text), o, project);
}

/** What git's hooks and config files run: files of the tree, and their Python commands' import folders, interpreters and imported names. */
interface ByGit {
  files: string[];
  importRoots: string[];
  pythons: string[];
  pyNames: string[];
  /** package.json keys a hook runs through (`scripts.lint` for `npm run lint`, `imports`). */
  manifestKeys: { pkg: string; key: string }[];
  /** Scripts a hook runs across the workspace (`pnpm -r lint`): watched in every package.json. */
  wideScripts: string[];
}
