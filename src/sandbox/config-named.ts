import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { DlError } from "../errors.ts";
import { entryExists, isFolder, isRegularFile, readRegularHead } from "../sys/file-head.ts";
import { canonicalPath, isWithin, resolveUserPath } from "../sys/paths.ts";
import { foldName, inPackagesFolder, ruleForName } from "../sys/protected-names.ts";
import { claudePluginDirs } from "./claude-plugins.ts";
import {
  binEntries,
  binsRun,
  direnvLoads,
  linkChain,
  linkedIntoTree,
  managerFiles,
  nodePreloads,
  type PathDir,
  packageEntries,
  packageRootOf,
  packagesRun,
  pathDirs,
  pathFolders,
  pathListSet,
  runnerFiles,
} from "./config-programs.ts";
import { hookKeyCommands, isLintStagedConfig, jsonNodes, lintStagedTasks, toolKeyStrings } from "./hook-tasks.ts";
import { isSectionedManifest, toolsPart } from "./manifest-sections.ts";
import {
  dependencyClosure,
  installedPackage,
  mappedImport,
  namedPlugins,
  packagesImported,
  specifiersImported,
  subpathImports,
  tsconfigsOf,
} from "./node-deps.ts";
import { lifecycleOf, RUN_ALIASES, scriptWords } from "./pm-words.ts";
import { pythonCommands, pythonImported, pythonModulesOf, pythonOf } from "./python-imports.ts";
import { globMatches, isScriptGlob, runnerScripts } from "./script-runners.ts";
import { workspacePackages, workspaceScriptsRun } from "./workspace-runs.ts";

/**
 * The files of the work tree that a protected configuration runs: a Claude Code hook's
 * `sh ./scripts/fmt.sh`, an `.mcp.json` server's `node tools/mcp.js`, husky's
 * `.husky/pre-commit` calling `scripts/check.sh`, a pre-commit `repo: local` entry's
 * `./scripts/lint.sh`. The configuration is read-only to delegates, so the script it names
 * must be too, or a delegate rewrites the script instead and the host runs it all the same.
 *
 * Read from the text of every file of the protected entry, whatever its format (JSON,
 * YAML, TOML, shell): each word that names a regular file of the work tree, resolved
 * against the folder holding the configuration (the project its host tool runs in) and
 * against the configuration file's own folder. A bare word (`hook.js`) counts only when it
 * looks like a program (a script's extension, or executable) or is what an interpreter
 * runs (`bash statusline`, `sh fmt`), so `package.json` in a hook's file pattern does not
 * make the manifest read-only; a path (`./x`, `a/b`, `$CLAUDE_PROJECT_DIR/x`) counts
 * whatever it is. What a named script names in turn is followed too, to the end of the
 * chain (each file is read once), and a memory file's imports (CLAUDE.md, `.claude/rules/`) as deep as Claude Code reads them. Markdown is read in its front matter and in the
 * commands Claude Code runs as it loads a command or a skill (`` !`cmd` ``, bangCommands);
 * the rest of its body is prose for a model. VS Code's `launch.json` is not read at all (it runs when
 * the user starts a debug session, by choice).
 */

/**
 * Files of one protected folder (`.claude/`, a plugin) and bytes read per file. Past the
 * cap the job is refused, never run with the rest unread: which file a walk reaches first
 * is the disk's order, and a hook's script named by the 201st file is run all the same.
 */
const MAX_FILES = 10_000;
const MAX_BYTES = 256 * 1024;
/** Claude Code follows a memory file's `@path` imports this many hops deep: every one of them is read. */
const IMPORT_HOPS = 5;
/** Programs whose next word (options skipped) is the file they run: `sh fmt`, `bash statusline`, `node tool`. */
const INTERPRETER =
  /^(sh|bash|dash|zsh|ksh|fish|source|node|bun|deno|tsx|ts-node|python[\d.]*|ruby|perl|php|lua|pwsh|Rscript)$/;

const SCRIPT_EXT = /\.(sh|bash|zsh|fish|ksh|js|mjs|cjs|ts|mts|cts|jsx|tsx|py|rb|pl|php|lua|ps1|bat|cmd|exe|jar)$/i;
/** Run only by the user's own choice. */
const USER_RUN = /^launch\.json$/i;

export interface NamedOptions {
  workdir: string;
  /** True for a path git ignores (dependencies, build output): not followed. */
  ignored(abs: string): boolean;
  /** The user's home: a config's `~/x` or `$HOME/x` resolves there (resolveUserPath), which matters when it holds the workdir. */
  home?: string;
}

/** The leading bytes of a regular file, as text; null for anything else or binary content. */
function readText(path: string): string | null {
  const text = readRegularHead(path, MAX_BYTES);
  return text?.includes("\0") ? null : text;
}

/** Memory files Claude Code (and Gemini CLI) load with their `@path` imports, which steer the model as the file does. */
const MEMORY = /^(claude(\.local)?|agents?|gemini)\.md$/i;
/** Claude Code's project rules (`.claude/rules/**.md`): loaded as memory, `@path` imports and all. */
const RULES = /(^|\/)\.claude\/rules\/.+\.md$/i;

const isMemory = (file: string) => MEMORY.test(basename(file)) || RULES.test(file);

interface Source {
  file: string;
  /** A memory file, or one a memory file imports: its `@path` imports count too. */
  memory: boolean;
  /** A package.json script's command (`file` is its package.json), read instead of the file. */
  text?: string;
  /** `text` is a tool's settings (package.json's tool keys), not commands: no first word runs. */
  settings?: true;
  /** A configuration's text, read as the file would be (the part of `~/.claude.json` that is this project's; a git config file's values as git reads them). */
  content?: string;
}

/** What a protected configuration runs of the work tree. */
export interface NamedByConfig {
  /** Regular files, links and folders put on PATH inside the work tree (absolute). */
  files: string[];
  /** Every folder put on PATH, the work tree itself too (`PATH_add .`), with the line that puts it there. */
  pathDirs: PathDir[];
  /** package.json scripts a command runs (`npm run x`, `npm test`, `pnpm x`…), with npm's pre/post ones. */
  npmScripts: { pkg: string; name: string }[];
  /** Other package.json keys a protected file runs through (`imports`, for its `#x` imports). */
  manifestKeys: { pkg: string; key: string }[];
  /** Folders a protected Python command imports from first (python-imports.ts): their new modules are the host's code. */
  importRoots: string[];
  /** The interpreters of those commands, asked which module names a new module there would shadow (python-names.ts). */
  pythons: string[];
  /** The modules protected Python sources import by name (a new one of these names counts too). */
  pyNames: string[];
  /** Checkouts inside the entry, read as projects of their own (namedByCheckouts). */
  checkouts: string[];
  /** Scripts a workspace-wide command runs (`pnpm -r lint`): watched in every package.json, one a job adds too. */
  wideScripts: string[];
}

/** Package managers' own commands: `pnpm install` runs no script of that name. */
const PM_BUILTIN =
  /^(install|i|ci|add|remove|rm|uninstall|update|up|upgrade|exec|x|dlx|create|init|link|unlink|pack|publish|info|view|list|ls|outdated|audit|config|cache|why|prune|rebuild|store|patch|import|global|set|version|help|login|logout|whoami|node|env|bin|root|dedupe|run)$/;
/** bun's own: its test runner and bundler. */
const BUN_BUILTIN = /^(test|build|pm|upgrade|repl)$/;

/** The package.json scripts `text` runs: `npm run x`, `npm test|start|stop|restart`, `pnpm/yarn/bun [run] x`, and what a built-in command runs on its own (`npm ci`: the install's lifecycle). */
function npmScriptsRun(text: string): string[] {
  const out: string[] = [];
  for (const command of text.split(/&&|\|\||[;|\n]/)) {
    const t = command.split(/[\s"'`&()]+/).filter(Boolean);
    for (let i = 0; i < t.length; i++) {
      const tool = /^(npm|pnpm|yarn|bun)$/.exec(basename(t[i]!))?.[1];
      if (tool) out.push(...scriptsOfCommand(tool, t, i + 1));
    }
  }
  return out;
}

/** What one package manager's command (its words from `from`) runs of package.json. */
function scriptsOfCommand(tool: string, t: readonly string[], from: number): string[] {
  const named = t.slice(from).some((w) => RUN_ALIASES.test(w));
  const words = scriptWords(t, from);
  if (!named && (words.length === 0 || PM_BUILTIN.test(words[0]!) || (tool === "npm" && LIFECYCLE_CMD.test(words[0]!))))
    return lifecycleOf(words[0]);
  return words.flatMap((raw) => {
    if (!named && tool === "npm" && raw === "restart") return lifecycleOf(raw); // stop and start, without a restart script
    if (!named && tool === "npm" && !/^(test|t|tst|start|stop)$/.test(raw)) return [];
    if (!named && tool === "bun" && BUN_BUILTIN.test(raw)) return [];
    const name = raw === "t" || raw === "tst" ? "test" : raw;
    return [name, `pre${name}`, `post${name}`];
  });
}

/** npm's own commands that run lifecycle scripts (pm-words.ts lifecycleOf). */
const LIFECYCLE_CMD =
  /^(install|i|add|ci|clean-install|it|cit|install-test|install-ci-test|pack|publish|version|rebuild)$/;

/**
 * The package.json files a package manager started in `dir` could take its scripts from:
 * each from `dir` up to the nearest one there is (npm, pnpm, yarn and bun walk up to it),
 * or up to the work tree's root when there is none. A job could make any of the absent ones,
 * which the manager would then read first. The nearest one's scripts (none when it is not JSON).
 */
function scriptPlaces(dir: string, o: NamedOptions): { pkgs: string[]; scripts: Record<string, unknown> } {
  const pkgs: string[] = [];
  for (let d = dir; d === o.workdir || isWithin(d, o.workdir); d = dirname(d)) {
    const pkg = join(d, "package.json");
    pkgs.push(pkg);
    const text = readText(pkg);
    if (text !== null) {
      try {
        const scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
        return { pkgs, scripts: typeof scripts === "object" && scripts ? (scripts as Record<string, unknown>) : {} };
      } catch {
        return { pkgs, scripts: {} }; // not JSON: npm runs nothing from it (until a job rewrites it)
      }
    }
    if (d === o.workdir) break;
  }
  return { pkgs, scripts: {} };
}

/**
 * The words a host acts on, and the files the source imports: a markdown file's front
 * matter and the commands of its body Claude Code runs (bangCommands), a memory file's
 * `@path` imports as well.
 */
function wordsOf(src: Source): Words {
  const none = {
    words: [],
    tokens: [],
    sourced: [],
    imports: [],
    runs: [],
    wideRuns: [],
    bins: [],
    packages: [],
    paths: [],
    loads: { files: [], up: [] },
    plugins: [],
    required: [],
    bare: [],
    subpaths: [],
    pyImports: [],
    python: null,
  };
  if (USER_RUN.test(basename(src.file))) return none;
  const text = src.content ?? src.text ?? readText(src.file);
  if (text === null) return none;
  const acted = src.text !== undefined || !/\.(md|mdc|markdown)$/i.test(src.file);
  const front = acted ? text : markdownActed(text);
  const staged = src.text === undefined && isLintStagedConfig(src.file) ? lintStagedTasks(src.file, text) : null;
  const json = src.text === undefined && /\.json$/i.test(src.file);
  const body = staged?.json ? staged.lines : json ? `${front}\n${jsonCommandLines(text)}` : front;
  const imports = !acted && src.memory ? [...text.matchAll(/(?:^|\s)@([^\s@`]+)/g)].map((m) => m[1]!) : [];
  // A package.json script or hook key and a lint-staged task run with node_modules/.bin first on PATH: their first words count.
  const named = staged
    ? [...binsRun(staged.lines, true), ...binsRun(body, false)]
    : binsRun(body, src.text !== undefined && !src.settings);
  // A runner that puts node_modules/.bin first on PATH (npm run, npx, lint-staged) looks up
  // there what no word names: npm's `sh` for `sh -c <script>`, and the `node` of every bin's
  // `#!/usr/bin/env node`; a job's node_modules/.bin/sh ran at the commit.
  const bins = named.length > 0 ? [...named, "sh", "node"] : named;
  const plugins = src.text === undefined ? claudePluginDirs(src.file, text) : [];
  const required = requiredBy(src, text);
  const python = src.text === undefined ? pythonOf(src.file, text) : null;
  return {
    words: commandWords(body),
    sourced: [...body.matchAll(DOT_SOURCE)].map((m) => m[1]!),
    tokens: commandTokens(body),
    imports,
    runs: [...npmScriptsRun(body), ...runnerScripts(body)],
    wideRuns: workspaceScriptsRun(body),
    bins,
    packages: [...packagesRun(body), ...nodePreloads(body)],
    paths: pathDirs(body),
    loads: direnvLoads(body),
    plugins,
    required,
    bare: src.text === undefined && !src.file.includes("/node_modules/") ? specifiersImported(src.file, text) : [],
    subpaths: src.text === undefined ? subpathImports(src.file, text) : [],
    pyImports: python ? pythonImported(text) : [],
    python,
  };
}

/** Of a markdown file, what a host acts on: its front matter, and the commands of its body Claude Code runs (bangCommands). */
function markdownActed(text: string): string {
  const frontMatter = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1] ?? "";
  return [frontMatter, bangCommands(text)].join("\n");
}

/**
 * What Claude Code runs of a command's or a skill's body when it loads it, before the model
 * reads it (its own patterns): each `` !`cmd` `` span after white space, and each ```` ```! ````
 * block. Read in every markdown file a configuration holds: a memory file's are not run,
 * but naming their files too costs a refusal at most.
 */
function bangCommands(text: string): string {
  const spans = [...text.matchAll(/(?<=^|\s)!`([^`]+)`/gm)].map((m) => m[1]!);
  const blocks = [...text.matchAll(/```!\s*\n?([\s\S]*?)\n?```/g)].map((m) => m[1]!);
  return [...spans, ...blocks].join("\n");
}

/**
 * The installed packages a source loads by name (node-deps.ts): a JavaScript file's imports;
 * for a tool's configuration, the tool and the plugins and presets its strings name; the
 * same for package.json's tools' keys. A package's own files name none: its dependencies
 * are followed instead.
 */
function requiredBy(src: Source, text: string): string[] {
  if (src.settings && isPackageJson(src.file)) return namedPlugins(text.split("\n"));
  if (src.text !== undefined || src.file.includes("/node_modules/")) return [];
  const tool = toolOf(src.file);
  // Every string of the config, whatever its format (lint-staged's reader is format-blind).
  const plugins = tool.length > 0 ? namedPlugins(lintStagedTasks(src.file, text).lines.split("\n")) : [];
  return [...packagesImported(src.file, text), ...tool, ...plugins];
}

/**
 * The tool a configuration of rule tool-config is for (`eslint.config.js`: eslint,
 * `.prettierrc.json`: prettier): the tool's editor extension loads that package from the
 * project's node_modules to read it, as the hook that runs the tool does.
 */
function toolOf(file: string): string[] {
  const dir = dirname(file);
  if (ruleForName(basename(file), basename(dir), inPackagesFolder(dir))?.id !== "tool-config") return [];
  const name = /^\.?([a-z0-9~-][a-z0-9._~-]*?)(?:\.config\.[^.]+|rc(?:\.[^.]+)?)$/i.exec(basename(file))?.[1];
  return name ? [name.toLowerCase()] : [];
}

/**
 * A package.json's hook-manager keys, each as a protected configuration's text (the commands
 * it holds: hook-tasks.ts), and its other tools' keys as one settings text (the paths they
 * name); a Python manifest's tools' part as settings text. The file itself stays writable.
 */
function manifestSources(pkg: string): Source[] {
  if (!isPackageJson(pkg))
    return [{ file: pkg, memory: false, text: toolsPart(pkg, readText(pkg) ?? ""), settings: true }];
  const settings: Source = { file: pkg, memory: false, text: toolKeyStrings(pkg), settings: true };
  return [...hookKeyCommands(pkg).map((text) => ({ file: pkg, memory: false, text })), settings];
}

/** package.json: read for its hook keys (manifestSources), never protected whole. */
export const isPackageJson = (entry: string) => foldName(basename(entry)) === "package.json";

/** A manifest whose tools' part alone is configuration: package.json (hook-keys.ts), pyproject.toml, setup.cfg (manifest-sections.ts). */
export const isManifest = (entry: string) => isPackageJson(entry) || isSectionedManifest(entry);

/** A folder's entry whose text a host runs: what a protect rule other than git's names, and the manifests. */
export function configEntry(name: string, parent: string): boolean {
  const rule = ruleForName(name, basename(parent), inPackagesFolder(parent));
  return (!!rule && rule.id !== "git-metadata") || isManifest(name);
}

/**
 * A JSON config's commands as the host runs them: `{"command": "node", "args": ["./srv"]}`
 * (an .mcp.json server, a VS Code task) is the line `node ./srv`, so the word an
 * interpreter runs follows it, not the key between them.
 */
function jsonCommandLines(text: string): string {
  const lines: string[] = [];
  for (const v of jsonNodes(text)) {
    if (typeof v !== "object" || v === null) continue;
    const o = v as Record<string, unknown>;
    // An env map (an .mcp.json server's, Claude Code's settings' `env`) is the environment its host runs commands with.
    const env = typeof o.env === "object" && o.env !== null ? Object.entries(o.env as Record<string, unknown>) : [];
    const assigned = env.flatMap(([k, v]) => (typeof v === "string" ? [`${k}=${v}`] : []));
    if (assigned.length > 0) lines.push(assigned.join(" "));
    if (typeof o.command === "string" && Array.isArray(o.args))
      lines.push([o.command, ...o.args.filter((a): a is string => typeof a === "string")].join(" "));
  }
  return lines.join("\n");
}

interface Words {
  words: string[];
  /** The same, options kept (runnerFiles reads `-C`, `-f`). */
  tokens: string[];
  /** Files the shell's `.` reads (`. hookenv`). */
  sourced: string[];
  imports: string[];
  runs: string[];
  /** Scripts run in every package of a workspace (workspace-runs.ts). */
  wideRuns: string[];
  /** Names run from node_modules/.bin (config-programs.ts). */
  bins: string[];
  /** Packages a runner is handed by name (`npx -y @scope/pkg`): their folders run. */
  packages: string[];
  /** Folders put on PATH. */
  paths: PathDir[];
  /** Files direnv loads (config-programs.ts direnvLoads). */
  loads: ReturnType<typeof direnvLoads>;
  /** Claude Code plugin and marketplace folders (claude-plugins.ts). */
  plugins: string[];
  /** Packages a JavaScript source loads by name, and the tool a tool configuration is for (node-deps.ts). */
  required: string[];
  /** A JavaScript source's whole bare specifiers (`src/store`): looked up in NODE_PATH's folders too. */
  bare: string[];
  /** Its subpath imports (`#lint/rules`), mapped by the nearest package.json's `imports`. */
  subpaths: string[];
  /** A Python source's imports (python-imports.ts pythonImported). */
  pyImports: string[];
  /** A Python file's interpreter (by its shebang, or python3 for its name): run as a script, it imports from its own folder first. */
  python: string | null;
}

/** The regular files and the links of an entry (itself, or what a folder holds), without following links. */
function filesOf(entry: string): { files: string[]; links: string[]; checkouts: string[] } {
  const files: string[] = [];
  const links: string[] = [];
  const checkouts: string[] = [];
  const stack = [entry];
  while (stack.length > 0) {
    if (files.length + links.length >= MAX_FILES) throw tooManyFiles(entry);
    const p = stack.pop()!;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isFile()) files.push(p);
    else if (st.isSymbolicLink()) links.push(p);
    else if (st.isDirectory()) {
      // A checkout of its own (Claude Code's .claude/worktrees/<name>, with its node_modules) is
      // not this entry's configuration: a project of its own (namedByCheckouts).
      if (p !== entry && entryExists(join(p, ".git"))) {
        checkouts.push(p);
        continue;
      }
      try {
        for (const n of readdirSync(p)) stack.push(join(p, n));
      } catch {
        // unreadable: nothing in it reaches the host through us either
      }
    }
  }
  return { files, links, checkouts };
}

function tooManyFiles(entry: string): DlError {
  return new DlError(
    "bad_input",
    `${entry} holds more than ${MAX_FILES} files: too many for dl to read what a host runs from them; run this job on a copy without them`,
    { failure_kind: "workdir_forbidden", reason: "too_large" },
  );
}

/** What a link of a protected entry reaches inside the tree (a hook linked to `scripts/pre-commit`): the host reads through it. */
function linkTargets(link: string, workdir: string): string[] {
  try {
    const to = readlinkSync(link);
    return linkChain(isAbsolute(to) ? resolve(to) : resolve(dirname(link), to), workdir);
  } catch {
    return [];
  }
}

/**
 * Words of a command line or config value; a leading `$VAR/`, `"$VAR"/`, `${VAR}/` or `$VAR$/`
 * (the project dir a host sets: `$CLAUDE_PROJECT_DIR`, `${workspaceFolder}`, `$PROJECT_DIR$`) becomes `./`.
 */
function commandWords(text: string): string[] {
  return commandTokens(text)
    .map((w) => w.replace(/[:.]+$/, ""))
    .filter((w) => w.length > 0 && !w.startsWith("-") && !w.includes("://"));
}

/**
 * The one split of a command line into tokens, options kept (`-C sub`, `--file=x` split at
 * `=`). A leading `$VAR/`, `${…}/`, `$(…)/` or `` `…`/ `` (the project dir a host sets, a
 * hook's `$(git rev-parse --show-toplevel)/x`, `${0%/*}/x`, `$(dirname "$0")/x`) becomes `./`,
 * read against the project and against the file's own folder.
 */
function commandTokens(text: string): string[] {
  return text
    .replace(/(\$\{HOME\}|\$HOME)(?![A-Za-z0-9_])(\\?["'])?\//g, "~/")
    .replace(/(\$\{[^}\s]*\}|\$\([^()]*\)|`[^`]*`|\$[A-Za-z_][A-Za-z0-9_]*\$?)(\\?["'])?\//g, "./")
    .split(/[\s"'`=,;|&()<>[\]{}]+/)
    .filter((w) => w.length > 0 && w.length < 4096);
}

/**
 * The shell's `. file` at a command's start (`. hookenv`, `then . ./env`): bash reads a bare
 * name from the folder it runs in, as `source` does. (A `.` elsewhere is an argument: `eslint .`.)
 */
const DOT_SOURCE = /(?:^|[\n;&|({]|\b(?:then|do|else))[ \t]*\.[ \t]+(?:--[ \t]+)?["']?([^\s;&|)"'`]+)/g;

/** The words an interpreter runs as its program (`sh fmt`: `fmt`, `. env`: `env`), whatever their name. */
function interpreted(words: string[], sourced: readonly string[]): Set<string> {
  return new Set([...sourced, ...interpretedTokens(words)]);
}

/** What an interpreter is handed as its program, of `tokens` (the command's words, or its tokens as written: `.` kept). */
function interpretedTokens(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!INTERPRETER.test(basename(tokens[i]!))) continue;
    let j = i + 1;
    while (tokens[j]?.startsWith("-")) j++;
    if (tokens[j] !== undefined) out.push(tokens[j]!);
  }
  return out;
}

/** A dotted module name (`python -m pkg.serve`): its first part is the package the interpreter imports first. */
const MODULE = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$/;

/**
 * Folders of the work tree that an interpreter runs as its program: `node ./srv` (the
 * folder's package.json `main`, else its index.js), `python -m pkg` or `-m pkg.serve`
 * (pkg/__main__.py, pkg/__init__.py and what they import). What runs is whatever the
 * folder holds, so the folder is named whole, as a plugin folder is.
 */
function programFolders(run: ReadonlySet<string>, bases: string[], o: NamedOptions): string[] {
  const out: string[] = [];
  for (const w of run) {
    const name = MODULE.test(w) && !SCRIPT_EXT.test(w) ? w.slice(0, w.indexOf(".")) : w;
    for (const base of bases) {
      const abs = resolveUserPath(name, base, o.home);
      if (abs === o.workdir || !isWithin(abs, o.workdir) || (!name.includes("/") && o.ignored(abs))) continue;
      try {
        if (lstatSync(abs).isDirectory()) out.push(abs);
      } catch {
        // not there: nothing to run
      }
    }
  }
  return out;
}

function isProgram(word: string, abs: string, run: ReadonlySet<string>): boolean {
  if (word.includes("/") || run.has(word)) return true;
  if (SCRIPT_EXT.test(word)) return true;
  try {
    return (lstatSync(abs).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The work tree's regular files that `word` names from `bases` (any file for an import,
 * else a program). A path (`.venv/bin/python`) names that exact entry even where git
 * ignores it, a link too (kept as it is, not followed): the config runs it, whoever made
 * it. A bare word is looked for outside ignored folders only. An import, or a path an
 * interpreter runs or with a script's extension, found from no base is named absent.
 */
function resolveWord(word: string, bases: string[], o: NamedOptions, run: ReadonlySet<string> | "any"): string[] {
  const out: string[] = [];
  const absent: string[] = [];
  const tried: string[] = [];
  const exact = word.includes("/");
  for (const base of bases) {
    const abs = resolveUserPath(word, base, o.home);
    // A path outside the tree may lead into it through links (`~/.claude/statusline.sh`, stowed from a dotfiles checkout).
    if (exact && !isWithin(abs, o.workdir))
      out.push(...linkedIntoTree(abs, o.workdir).filter((p) => isWithin(p, o.workdir)));
    if (abs === o.workdir || !isWithin(abs, o.workdir) || (!exact && o.ignored(abs))) continue;
    // node's and bun's way to a module or a program named without its extension (`require("./lib")`,
    // `node scripts/check`, `node mcpsrv`, `import "./x.js"` that is x.ts): the file found, and the places tried before it, watched.
    const relative = (exact && word.startsWith(".")) || (run !== "any" && run.has(word));
    const loaded = relative ? loaderResolve(abs) : null;
    if (loaded?.found) {
      out.push(loaded.found);
      tried.push(...loaded.before.filter((p) => isWithin(p, o.workdir)));
      continue;
    }
    try {
      const st = lstatSync(abs);
      if (exact && st.isSymbolicLink()) out.push(...linkChain(abs, o.workdir));
      else if (st.isFile() && (run === "any" || isProgram(word, abs, run))) out.push(abs);
    } catch {
      // Not there yet: an import, or a script the config runs when it appears (`[ -f
      // scripts/local.sh ] && sh scripts/local.sh`), is named absent, so a job cannot make it.
      if (run === "any" || (exact && (run.has(word) || SCRIPT_EXT.test(word)))) absent.push(abs);
    }
  }
  // The places node tried before the file it found: a new one there would be loaded instead.
  out.push(...tried);
  // Where it is found from one base, that is what runs; only a word found from none is named absent.
  return out.length > 0 ? out : absent;
}

/** What node and bun add to a path that names no file: extensions, then a folder's index. */
const LOADER_EXTS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx", ".json", ".node"];

/**
 * The file node or bun loads for `abs` named without its extension (or as `x.js` for a
 * TypeScript `x.ts`, as bun and tsx read it), and the places they try before it; null
 * when `abs` is itself a file.
 */
function loaderResolve(abs: string): { found: string | null; before: string[] } | null {
  if (isRegularFile(abs)) return null;
  const stem = abs.replace(/\.(c|m)?js$/, "");
  const tried = [
    ...LOADER_EXTS.map((x) => `${abs}${x}`),
    ...(stem !== abs ? [".ts", ".tsx", ".mts", ".cts"].map((x) => `${stem}${x}`) : []),
    ...LOADER_EXTS.map((x) => join(abs, `index${x}`)),
  ];
  const at = tried.findIndex(isRegularFile);
  return at < 0 ? { found: null, before: [] } : { found: tried[at]!, before: tried.slice(0, at) };
}

/**
 * The files of the work tree direnv loads for an .envrc of `project` (direnvLoads): each
 * as written, from the .envrc's folder (a folder: the file it reads there), and each name
 * `source_up` looks for in the folders above, up to the work tree's root; present or not,
 * so a job that makes `.envrc.local` or `.env` is found. A link and its chain count too.
 */
function direnvFiles(loads: Words["loads"], project: string, o: NamedOptions): string[] {
  const out: string[] = [];
  const keep = (abs: string) => {
    if (abs === o.workdir || !isWithin(abs, o.workdir)) return;
    out.push(abs, ...linkChain(abs, o.workdir));
  };
  for (const f of loads.files) {
    const abs = resolveUserPath(f.path, project, o.home);
    let folder = false;
    try {
      folder = lstatSync(abs).isDirectory();
    } catch {
      // absent: named as written
    }
    keep(folder ? join(abs, f.inDir) : abs);
  }
  for (const name of loads.up)
    for (let d = dirname(project); d !== project && isWithin(d, o.workdir); d = dirname(d)) {
      keep(join(d, name));
      if (d === o.workdir) break;
    }
  return [...new Set(out)];
}

/**
 * The virtualenv whose interpreter folder `bin` is (`<venv>/bin` or `Scripts`, beside its
 * `pyvenv.cfg`), inside the work tree; else null. A config that runs its python (VS Code's
 * interpreter, a hook's `.venv/bin/python x.py`, its bin put on PATH) runs what that python
 * loads at every start: `site-packages/*.pth` lines (`import os; os.system(...)`),
 * `sitecustomize.py`, the packages it imports. So the virtualenv is named whole, as
 * direnv's `layout python` one is: read-only to delegates, who cannot install into it.
 */
function venvOf(bin: string, workdir: string): string | null {
  if (!/^(bin|Scripts)$/.test(basename(bin))) return null;
  const venv = dirname(bin);
  if (venv === workdir || !isWithin(venv, workdir)) return null;
  return entryExists(join(venv, "pyvenv.cfg")) ? venv : null;
}

/**
 * The package.json scripts `runs` names, each watched in every package.json the manager
 * could read it from (scriptPlaces), there or not (`prelint` that `npm run lint` runs
 * first, once a job adds it); the nearest one's existing scripts are read once as their
 * command's text. `seen` (package.json and script name) is kept across levels.
 */
function scriptsRun(
  runs: readonly string[],
  project: string,
  o: NamedOptions,
  seen: Map<string, { pkg: string; name: string }>,
): Source[] {
  if (runs.length === 0) return [];
  const { pkgs, scripts } = scriptPlaces(project, o);
  const out: Source[] = [];
  for (const name of runs)
    for (const pkg of pkgs) {
      if (seen.has(`${pkg}\0${name}`)) continue;
      seen.set(`${pkg}\0${name}`, { pkg, name });
      if (pkg !== pkgs.at(-1)) continue;
      const bodies = isScriptGlob(name)
        ? Object.entries(scripts).flatMap(([k, v]) => (globMatches(name, k) ? [v] : []))
        : [scripts[name]];
      for (const body of bodies) if (typeof body === "string") out.push({ file: pkg, memory: false, text: body });
    }
  return out;
}

/**
 * Every regular file of the work tree a protected entry (a config file or folder, at
 * `entry`) names, every package.json script it runs, and what those name in turn; the
 * entry's own files excluded. `project`: where its host runs it (the folder holding the
 * entry, or git's work tree root for a hook).
 */
export function namedByToolConfig(entry: string, o: NamedOptions, project = dirname(entry)): NamedByConfig {
  const manifest = isManifest(entry);
  const { files, links, checkouts } = manifest ? { files: [entry], links: [], checkouts: [] } : filesOf(entry);
  const walk = new NamedWalk(new Set(files), o, project);
  walk.checkouts.push(...checkouts);
  const level: Source[] = manifest ? manifestSources(entry) : files.map((file) => ({ file, memory: isMemory(file) }));
  for (const abs of links.flatMap((l) => linkTargets(l, o.workdir)))
    if (!walk.found.has(abs)) {
      walk.found.add(abs);
      level.push({ file: abs, memory: isMemory(abs) });
    }
  return walkFrom(walk, level);
}

/**
 * What a configuration runs of the tree, given its text in place of the file's (`file` names
 * where it comes from; a `.json` one is read as JSON): the host runs it with `project` as its folder.
 */
export function namedByText(file: string, content: string, o: NamedOptions, project: string): NamedByConfig {
  return walkFrom(new NamedWalk(new Set([file]), o, project), [{ file, memory: false, content }]);
}

/** Follows `level` and what it names, level by level, to the end. */
function walkFrom(walk: NamedWalk, first: Source[]): NamedByConfig {
  let level = first;
  // Scripts are followed to the end of their chain (take reads each file once); a memory
  // file's imports as deep as Claude Code follows them.
  for (let depth = 0; level.length > 0; depth++) {
    for (const src of level) followSource(walk, src, depth);
    level = walk.next;
    walk.next = [];
  }
  return {
    files: [...walk.found],
    pathDirs: walk.onPath,
    npmScripts: [...walk.scripts.values()],
    manifestKeys: [...walk.keys.values()],
    importRoots: [...walk.importRoots],
    pythons: [...walk.pythons],
    pyNames: [...walk.pyNames],
    checkouts: walk.checkouts,
    wideScripts: [...walk.wide],
  };
}

/** Checkouts inside checkouts inside protected folders, followed this deep. */
const CHECKOUT_HOPS = 3;

/**
 * What the configurations of the checkouts kept inside protected folders run: Claude
 * Code's `.claude/worktrees/<name>` is a project of its own that the host opens, and what
 * its configuration names outside it is the workdir's (its hook's `npx lintx` walks up to
 * the workdir's node_modules/.bin when the worktree has none). Read as the configurations
 * at each checkout's root, with the checkout as their project.
 */
export function namedByCheckouts(checkouts: readonly string[], o: NamedOptions): NamedByConfig[] {
  const out: NamedByConfig[] = [];
  const seen = new Set<string>();
  let level = [...checkouts];
  for (let hop = 0; hop < CHECKOUT_HOPS && level.length > 0; hop++) {
    const next: string[] = [];
    for (const c of level) {
      if (seen.has(c)) continue;
      seen.add(c);
      let names: string[] = [];
      try {
        names = readdirSync(c);
      } catch {
        // unreadable: the host reads nothing there either
      }
      for (const n of names.filter((n) => configEntry(n, c))) {
        const named = namedByToolConfig(join(c, n), o, c);
        out.push(named);
        next.push(...named.checkouts);
      }
    }
    level = next;
  }
  return out;
}

/** One namedByToolConfig walk: what it has named so far, and the sources of its next level. */
class NamedWalk {
  readonly found = new Set<string>();
  readonly onPath: PathDir[] = [];
  readonly scripts = new Map<string, { pkg: string; name: string }>();
  readonly keys = new Map<string, { pkg: string; key: string }>();
  readonly importRoots = new Set<string>();
  /** NODE_PATH's folders a command of the walk sets: node looks there for a bare name no node_modules holds. */
  readonly nodePaths = new Set<string>();
  readonly pythons = new Set<string>();
  readonly pyNames = new Set<string>();
  /** Checkouts inside the entry (namedByCheckouts). */
  readonly checkouts: string[] = [];
  /** Scripts run in every package of the workspace, and the folders that hold a package.json. */
  readonly wide = new Set<string>();
  packages: string[] | undefined;
  next: Source[] = [];

  constructor(
    /** The entry's own files: never named (they are protected as the entry). */
    readonly own: ReadonlySet<string>,
    readonly o: NamedOptions,
    readonly project: string,
  ) {}

  /** A file named, followed at the next level. */
  take(abs: string, memory: boolean): void {
    if (this.own.has(abs) || this.found.has(abs)) return;
    this.found.add(abs);
    this.next.push({ file: abs, memory });
    this.takePackage(packageRootOf(abs, this.o.workdir));
  }

  /** A file of an installed package runs the package, whole, and what it requires (node-deps.ts). */
  takePackage(root: string | null): void {
    if (!root || this.found.has(root)) return;
    this.found.add(root);
    for (const p of dependencyClosure(root, this.o.workdir)) this.found.add(p);
  }
}

/** What one source (a file, a script's text) names, into `w`. */
function followSource(w: NamedWalk, src: Source, depth: number): void {
  const { o, project } = w;
  const parsed = wordsOf(src);
  const { words, tokens, sourced, imports, runs } = parsed;
  // An interpreter given a folder runs what is in it: the folder is the program, whole.
  const run = interpreted(words, sourced);
  followPrograms(w, src, parsed, run);
  // What direnv loads from an allowed .envrc on its own (source_env, dotenv, use nix): absent ones named too.
  for (const abs of direnvFiles(parsed.loads, project, o)) w.take(abs, false);
  // An import is relative to the file that holds it.
  if (depth < IMPORT_HOPS)
    for (const i of imports) for (const abs of resolveWord(i, [dirname(src.file)], o, "any")) w.take(abs, true);
  const here = placesOf(w, src, tokens);
  const bases = [...new Set([...here, dirname(src.file)])];
  for (const word of new Set(words))
    for (const abs of resolveWord(word, bases, o, run)) {
      w.take(abs, false);
      const venv = venvOf(dirname(abs), o.workdir);
      if (venv) w.found.add(venv);
    }
  for (const dir of here) {
    // `make lint`, `just fmt`: the runner reads its file from where the host runs it.
    for (const abs of runnerFiles(tokens, dir)) {
      // Each source names the same runner files again (make's ~50 remake sources each): asked once a walk.
      if (w.found.has(abs) || w.own.has(abs) || !isWithin(abs, o.workdir)) continue;
      if (entryExists(abs)) w.take(abs, false);
      else w.found.add(abs); // absent (GNUmakefile, Makefile.sh): watched, nothing to read
    }
    // `npm run lint`, `npx x`: the package manager obeys its own settings files there, absent ones named too.
    for (const abs of managerFiles(tokens, dir, o.workdir)) w.take(abs, false);
    w.next.push(...scriptsRun(runs, dir, o, w.scripts));
  }
  followWideRuns(w, parsed.wideRuns);
}

/** `pnpm -r lint`, `turbo run lint`: the script in every package of the tree, each read as its command, and watched in any package.json. */
function followWideRuns(w: NamedWalk, names: readonly string[]): void {
  if (names.length === 0) return;
  for (const n of names) w.wide.add(n);
  w.packages ??= workspacePackages(w.o.workdir, w.o.ignored);
  for (const dir of w.packages) w.next.push(...scriptsRun(names, dir, w.o, w.scripts));
}

/** Shell words that change the folder the rest of a command runs in. */
const CHANGE_DIR = /^(cd|pushd)$/;
/**
 * Runners' options that do the same: `uv run --directory srv`, `bun --cwd x`, `npm
 * --prefix x`, `pnpm --dir x` or `-C x`, and the workspace a script is run in (`npm run
 * lint -w web`, `--workspace=web`, `pnpm --filter ./web`): a folder the value names counts.
 */
const DIR_OPTION = /^(--(directory|cwd|prefix|dir|workspace|filter)|-[wC])$/;

/**
 * The folders a source's commands run in: where its host runs it, and every folder of the
 * tree a `cd` or `pushd` moves to (`cd tools && python3 gen.py`, `(cd web; npm run lint)`),
 * read from the project and the file's own folder. A folder named through a variable
 * (`cd "$(dirname "$0")"`) is the file's own folder, which is read already.
 */
function placesOf(w: NamedWalk, src: Source, tokens: readonly string[]): string[] {
  const out = new Set([w.project]);
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (!CHANGE_DIR.test(tokens[i]!) && !DIR_OPTION.test(tokens[i]!)) continue;
    let j = i + 1;
    while (/^-[LPe]$|^--$/.test(tokens[j] ?? "")) j++;
    const to = tokens[j];
    if (!to || to.includes("$")) continue;
    for (const base of [w.project, dirname(src.file)]) {
      const abs = resolveUserPath(to, base, w.o.home);
      if (isWithin(abs, w.o.workdir) && isFolder(abs)) out.add(abs);
    }
  }
  return [...out];
}

/** The programs a source runs by a folder or by a name the host looks up: plugin and program folders, bins, packages, PATH. */
/** Where a source's words are looked for: its host's folder and its own. */
const bases = (w: NamedWalk, src: Source) => [...new Set([w.project, dirname(src.file)])];

/**
 * The workdir run as the program (`node .`, `python3 .` in `.mcp.json`): it is the tree,
 * so it is not named whole, but what runs of it is: package.json's `main` key and the
 * file it names, the `index.*` node falls back to, `__main__.py`, there or not; and for
 * Python, the workdir is where it imports from first (a new `json.py` there shadows json).
 */
function workdirProgram(w: NamedWalk, tokens: readonly string[]): void {
  const { workdir } = w.o;
  const pkg = join(workdir, "package.json");
  w.keys.set(`${pkg}\0main`, { pkg, key: "main" });
  const main = packageMain(pkg);
  const entries = [...(main ? [resolve(workdir, main)] : []), ...LOADER_EXTS.map((x) => join(workdir, `index${x}`))];
  for (const p of [...entries, join(workdir, "__main__.py")]) {
    if (!isWithin(p, workdir) || p === workdir) continue;
    if (entryExists(p)) w.take(p, false);
    else w.found.add(p);
  }
  const python = tokens.find((t) => /^python[\d.]*$/.test(basename(t)));
  if (python) {
    w.importRoots.add(workdir);
    w.pythons.add(python);
  }
}

/** A package.json's `main`, or null. */
function packageMain(pkg: string): string | null {
  try {
    const main = (JSON.parse(readRegularHead(pkg, MAX_BYTES) ?? "") as { main?: unknown }).main;
    return typeof main === "string" && main !== "" ? main : null;
  } catch {
    return null;
  }
}

function followPrograms(w: NamedWalk, src: Source, parsed: Words, run: Set<string>): void {
  const { o, project } = w;
  // A plugin folder is Claude Code's configuration whole; what its files name is followed too.
  for (const d of [...parsed.plugins, ...programFolders(run, bases(w, src), o)]) {
    if (d === o.workdir || !isWithin(d, o.workdir) || w.found.has(d)) continue;
    w.found.add(d);
    for (const f of filesOf(d).files) if (!w.own.has(f)) w.next.push({ file: f, memory: false });
  }
  for (const word of interpretedTokens(parsed.tokens))
    if (bases(w, src).some((b) => resolveUserPath(word, b, o.home) === o.workdir)) workdirProgram(w, parsed.tokens);
  // What the host finds by name: node_modules/.bin's exact entries (their package with them:
  // take), a package a runner is handed by name, a folder put on PATH whole.
  for (const b of parsed.bins)
    for (const p of binEntries(b, project, o.workdir))
      for (const abs of entryExists(p) ? linkChain(p, o.workdir) : [p]) w.take(abs, false);
  for (const name of parsed.packages)
    for (const p of packageEntries(name, project, o.workdir)) {
      if (entryExists(p)) w.takePackage(p);
      else w.found.add(p); // absent: watched, so a job cannot make it
    }
  // What node finds by those names from the source's folder: an installed copy, whole, and the places looked at before it.
  for (const name of parsed.required)
    for (const p of installedPackage(name, dirname(src.file), o.workdir)) {
      if (entryExists(p)) w.takePackage(p);
      else w.found.add(p);
    }
  followNodePath(w, parsed);
  // `#x` imports: the files the nearest package.json maps them to, that map itself, and where a nearer one would go.
  for (const spec of parsed.subpaths) {
    const mapped = mappedImport(spec, dirname(src.file), o.workdir);
    if (!mapped) continue;
    w.keys.set(mapped.pkg, { pkg: mapped.pkg, key: "imports" });
    for (const t of mapped.targets) w.take(t, false);
    for (const p of mapped.nearer) w.found.add(p);
  }
  followImports(w, src, parsed);
  for (const d of pathFolders(parsed.paths, project, o.workdir, o.home)) {
    w.onPath.push(d);
    if (d.dir !== o.workdir) w.found.add(d.dir); // the work tree itself is watched, never bound (tree-guard.ts)
    const venv = venvOf(d.dir, o.workdir);
    if (venv) w.found.add(venv);
  }
}

/**
 * NODE_PATH (`NODE_PATH=. node x.js`, an MCP server's env map): node searches its folders
 * for a bare name after every node_modules, so `require("src/store")` runs `./src/store.js`.
 * The folders the walk's commands set are kept; each bare specifier of a source is looked
 * up there as node does: the file found and the places tried before it, or, found nowhere,
 * every place it would be (a job cannot make one).
 */
function followNodePath(w: NamedWalk, parsed: Words): void {
  for (const abs of pathListSet(parsed.tokens, "NODE_PATH", w.project, w.o.home))
    if (abs === w.o.workdir || isWithin(abs, w.o.workdir)) w.nodePaths.add(abs);
  for (const spec of parsed.bare)
    for (const dir of w.nodePaths) {
      const abs = join(dir, spec);
      if (!isWithin(abs, w.o.workdir)) continue;
      // A folder is a package to node: its package.json's main decides what loads (before index.*).
      if (isFolder(abs)) {
        if (entryExists(join(abs, "package.json"))) w.takePackage(abs);
        else w.found.add(join(abs, "package.json"));
      }
      const loaded = isRegularFile(abs) ? { found: abs, before: [] } : loaderResolve(abs);
      if (loaded?.found) w.take(loaded.found, false);
      for (const p of loaded?.found ? loaded.before : nodePathPlaces(abs)) w.found.add(p);
    }
}

/** Where node would find a bare name under a NODE_PATH folder that holds none yet: the file with each extension, a folder's index. */
function nodePathPlaces(abs: string): string[] {
  const inFolder = isFolder(abs) ? LOADER_EXTS.map((x) => join(abs, `index${x}`)) : [abs];
  return [...inFolder, ...LOADER_EXTS.map((x) => `${abs}${x}`)];
}

/** Python modules of the tree a protected command imports: a file, or a package folder whole. */
function takeModules(w: NamedWalk, paths: readonly string[]): void {
  for (const p of paths) {
    if (lstatSync(p).isDirectory()) {
      if (w.found.has(p)) continue;
      w.found.add(p);
      for (const f of filesOf(p).files) if (!w.own.has(f)) w.take(f, false);
    } else w.take(p, false);
  }
}

/**
 * What decides a source's imports besides package.json: the folders a Python command
 * imports from first and the modules a Python source imports of the tree
 * (python-imports.ts); for a TypeScript source, the nearest tsconfig.json or jsconfig.json
 * whose `paths` bun, tsx and esbuild resolve its bare imports through, and the places a
 * nearer one would decide instead (node-deps.ts).
 */
function followImports(w: NamedWalk, src: Source, parsed: Words): void {
  const { o, project } = w;
  const bases = [...new Set([project, dirname(src.file)])];
  const py = { roots: new Set<string>(), interpreters: new Set<string>(), modules: new Set<string>() };
  for (const dir of placesOf(w, src, parsed.tokens)) {
    const found = pythonCommands(parsed.tokens, [...new Set([...bases, dir])], dir, o);
    for (const k of ["roots", "interpreters", "modules"] as const) for (const v of found[k]) py[k].add(v);
  }
  for (const root of py.roots) w.importRoots.add(root);
  for (const interpreter of py.interpreters) w.pythons.add(interpreter);
  // A Python file the host runs as a script (`./scripts/check.py`, `uv run x.py`, its shebang) imports from its own folder first.
  if (parsed.python) {
    w.importRoots.add(dirname(src.file));
    w.pythons.add(parsed.python);
  }
  for (const name of parsed.pyImports) if (!name.startsWith(".")) w.pyNames.add(name);
  // The module -m runs is imported first by its name; pytest loads a conftest.py from its folder on its own.
  for (const m of py.modules) w.pyNames.add(m.split(".")[0]!);
  if (py.modules.has("pytest") || parsed.tokens.some((t) => /^(pytest|py\.test)$/.test(basename(t))))
    w.pyNames.add("conftest");
  // `python3 -m lint`: lint.py or the lint package of the folders it imports from first.
  const mains = [...py.modules].map((m) => m.split(".")[0]!);
  for (const root of py.roots) takeModules(w, pythonModulesOf(join(root, "-m"), mains, root, o.workdir));
  takeModules(w, pythonModulesOf(src.file, parsed.pyImports, project, o.workdir));
  // A tool's own configuration (vite.config.ts) is loaded by its tool: a TypeScript program a
  // config runs (bun's, tsx's) resolves through tsconfig.json.
  if (src.text !== undefined || ruleForName(basename(src.file), basename(dirname(src.file)))?.id === "tool-config")
    return;
  // tsx reads the tsconfig.json of the folder it runs in instead: that one counts as well.
  const own = tsconfigsOf(src.file, o.workdir);
  const isTs = own.present.length + own.absent.length > 0;
  const aliases: PathAlias[] = [];
  for (const ts of isTs ? [own, tsconfigsOf(join(project, "run.ts"), o.workdir)] : []) {
    for (const p of ts.present) keepTsconfig(w, p, aliases);
    for (const p of ts.absent) w.found.add(p);
  }
  if (aliases.length > 0) followAliases(w, readText(src.file) ?? "", aliases);
}

/** A `paths` entry with a wildcard (`"@/*": ["./src/*"]`): the folder its targets are read from. */
type PathAlias = { key: string; targets: string[]; dir: string };

/** A specifier of an import or require that is no relative path. */
const BARE_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"'\s./][^"'\s]*)["']/gm;

/** The files a protected program's bare imports reach through a wildcard alias, as the runtime resolves them; the places tried first watched. */
function followAliases(w: NamedWalk, text: string, aliases: readonly PathAlias[]): void {
  for (const m of text.matchAll(BARE_SPECIFIER)) {
    const spec = m[1]!;
    for (const a of aliases) {
      const [pre, post] = a.key.split("*") as [string, string];
      if (!spec.startsWith(pre) || !spec.endsWith(post) || spec.length < pre.length + post.length) continue;
      const star = spec.slice(pre.length, spec.length - post.length);
      for (const t of a.targets) {
        const abs = resolve(a.dir, t.replace("*", star));
        if (!isWithin(abs, w.o.workdir)) continue;
        const loaded = isRegularFile(abs) ? { found: abs, before: [] } : loaderResolve(abs);
        for (const p of loaded?.before ?? []) if (isWithin(p, w.o.workdir)) w.found.add(p);
        if (loaded?.found) w.take(loaded.found, false);
      }
    }
  }
}

/** A tsconfig.json that decides a protected program's imports, and the ones it extends by path; its `references` and `include` decide nothing there. */
function keepTsconfig(w: NamedWalk, file: string, aliases: PathAlias[], hops = 0): void {
  if (w.found.has(file) || hops > 8) return;
  w.found.add(file);
  const text = readText(file) ?? "";
  // An exact `paths` target (`"x": ["./lib/x.ts"]`) is the file the import loads; a wildcard one is resolved per import.
  const paths = /"paths"\s*:\s*\{([^{}]*)\}/.exec(text)?.[1] ?? "";
  // Targets are read from `baseUrl` when it is set, else from the tsconfig's own folder.
  const baseUrl = /"baseUrl"\s*:\s*"([^"]*)"/.exec(text)?.[1];
  const dir = baseUrl === undefined ? dirname(file) : resolve(dirname(file), baseUrl);
  for (const e of paths.matchAll(/"([^"]+)"\s*:\s*\[([^\]]*)\]/g)) {
    const targets = [...e[2]!.matchAll(/"([^"]+)"/g)].map((t) => t[1]!);
    if (e[1]!.split("*").length === 2)
      aliases.push({ key: e[1]!, targets: targets.filter((t) => t.includes("*")), dir });
    for (const t of targets.filter((x) => !x.includes("*"))) {
      const abs = resolve(dir, t);
      if (isWithin(abs, w.o.workdir)) entryExists(abs) ? w.take(abs, false) : w.found.add(abs);
    }
  }
  for (const m of text.matchAll(/"extends"\s*:\s*(\[[^\]]*\]|"[^"]*")/g))
    for (const e of m[1]!.matchAll(/"(\.{1,2}\/[^"]+)"/g)) {
      const target = resolve(dirname(file), e[1]!);
      const abs = /\.json$/.test(target) ? target : `${target}.json`;
      if (isWithin(abs, w.o.workdir)) keepTsconfig(w, abs, aliases, hops + 1);
    }
}

/**
 * The files of `workdir` that the protected configurations of the folders above it run,
 * up to `top` (aboveTop: the caller's project or the repository): Claude Code opened at the project's root
 * reads its CLAUDE.md (and every one on the way down) and runs its settings' commands,
 * whichever subfolder a delegate was given.
 */
export function namedFromAbove(
  workdir: string,
  top: string | null,
  ignored: (abs: string) => boolean,
  home?: string,
): FromAbove {
  const out = new Set<string>();
  const onPath: PathDir[] = [];
  const py = { importRoots: new Set<string>(), pythons: new Set<string>(), pyNames: new Set<string>() };
  const wide = new Set<string>();
  const none = { files: [], workdirOnPath: onPath, importRoots: [], pythons: [], pyNames: [], wideScripts: [] };
  if (!top || top === workdir || !isWithin(workdir, top)) return none;
  for (let d = dirname(workdir); d === top || isWithin(d, top); d = dirname(d)) {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      // unreadable: the host reads nothing there either
    }
    for (const n of names) {
      if (!configEntry(n, d)) continue;
      const named = namedByToolConfig(join(d, n), { workdir: top, ignored, home });
      // A folder on PATH that is the workdir, or holds it: never bound (the job could write nothing), watched instead.
      for (const f of named.files) if (f !== workdir && isWithin(f, workdir)) out.add(f);
      onPath.push(...named.pathDirs.filter((p) => p.dir === workdir));
      for (const r of named.importRoots) if (isWithin(r, workdir)) py.importRoots.add(r);
      for (const i of named.pythons) py.pythons.add(i);
      for (const n of named.pyNames) py.pyNames.add(n);
      for (const n of named.wideScripts) wide.add(n);
    }
    if (d === top) break;
  }
  return {
    files: [...out],
    workdirOnPath: onPath,
    importRoots: [...py.importRoots],
    pythons: [...py.pythons],
    pyNames: [...py.pyNames],
    wideScripts: [...wide],
  };
}

interface FromAbove {
  files: string[];
  /** Lines of the configs above that put the workdir itself on PATH. */
  workdirOnPath: PathDir[];
  /** Folders of the workdir (or the workdir) a Python command of the configs above imports from first. */
  importRoots: string[];
  pythons: string[];
  pyNames: string[];
  /** Scripts a workspace-wide command of theirs runs (`pnpm -r lint`). */
  wideScripts: string[];
}

/**
 * Up to where the configs of the folders above the workdir count: the outermost of the
 * caller's project folder and the repository's top level that holds the workdir. Claude
 * Code opened in `~/proj` (no repository) runs its hook's `bash sub/fmt.sh` whichever
 * subfolder a delegate was given; git and husky run the repository root's.
 */
export function aboveTop(workdir: string, project: string | undefined, toplevel: string | null): string | null {
  const holds = [project ? canonicalPath(project) : null, toplevel].filter(
    (d): d is string => !!d && d !== workdir && isWithin(workdir, d),
  );
  return holds.sort((a, b) => a.length - b.length)[0] ?? null;
}
