import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { DlError } from "../errors.ts";
import { entryExists, readRegularHead } from "../sys/file-head.ts";
import { isWithin, resolveUserPath } from "../sys/paths.ts";

/**
 * The programs a protected configuration runs by a name the host looks up, not by a path
 * of the tree: `npx lint-fix` and `npm exec`, `pnpm exec`, `yarn`, `bunx` (and the bare
 * first word of a package.json script a config runs, `eslint .`) run
 * `node_modules/.bin/<name>` of the project or a folder above it; `PATH_add bin` in an
 * `.envrc`, a `PATH=` in a config (VS Code's `terminal.integrated.env.*`, a shell
 * `export PATH=…`) or mise's `[env] _.path = ["./bin"]` puts a folder of the tree before
 * every command the shell runs. The configuration is
 * read-only, so what these resolve to must be too, or a delegate rewrites the program and
 * the host runs it all the same, though git ignores `node_modules`.
 *
 * Only the exact entries are named, not their folders, so a delegate may still
 * `npm install` other packages: the `.bin` link and every link and file of its chain
 * inside the work tree. A folder put on PATH is named whole: any new file in it shadows
 * a command (`bin/git`). When that folder is the workdir itself (`PATH_add .`) or holds it,
 * the tree guard watches its new entries instead of binding it (tree-guard.ts).
 */

/** Runners whose next word (options skipped) is a bin of node_modules. */
const BIN_RUNNER = /^(npx|bunx|pnpx)$/;
/** `<tool> exec|x|dlx <bin>`; yarn (v1 and berry) also runs a bin as `yarn <bin>` and `yarn run <bin>`. */
const EXEC_VERB = /^(exec|x|dlx)$/;
/** Links followed at most, as the kernel does (ELOOP past 40; a real chain is short). */
const MAX_LINKS = 40;
const NAME = /^[A-Za-z0-9@][\w.@+-]*$/;
/** A package a runner is given: `pkg`, `@scope/pkg`, either with `@version`; group 1 is the name. */
const PACKAGE_SPEC = /^((?:@[A-Za-z0-9][\w.+-]*\/)?[A-Za-z0-9][\w.+-]*)(?:@[^\s/]*)?$/;

/** One command of `text`: its words, the first that is no `VAR=value`, and the word a package runner runs. */
interface RunnerCommand {
  words: string[];
  first: number;
  /** What `npx x`, `pnpm exec x`, `yarn x`, `bunx x` run (options skipped); `viaExec`: not yarn's bare form. */
  target?: { word: string; viaExec: boolean };
}

function runnerCommands(text: string): RunnerCommand[] {
  return text.split(/&&|\|\||[;|\n]/).map((command) => {
    const t = command
      .trim()
      .split(/[\s"'`()]+/)
      .filter(Boolean);
    const first = t.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)); // `CI=1 eslint .`
    for (let i = Math.max(first, 0); i < t.length; i++) {
      const tool = basename(t[i]!);
      let j = i + 1;
      let viaExec = true;
      if (/^(npm|pnpm|yarn|bun)$/.test(tool) && EXEC_VERB.test(t[j] ?? "")) j++;
      // `yarn <bin>`: its next word taken whatever it is (binEntry names only a .bin entry that exists).
      else if (tool === "yarn") {
        j += t[j] === "run" ? 1 : 0;
        viaExec = false;
      } else if (!BIN_RUNNER.test(tool)) continue;
      while (t[j]?.startsWith("-")) j++;
      if (t[j] === "--") j++;
      if (t[j]) return { words: t, first, target: { word: t[j]!, viaExec } };
    }
    return { words: t, first };
  });
}

/** The bin names `text` runs through a package runner; `script` true for a package.json script's body (its commands' first words count). */
export function binsRun(text: string, script: boolean): string[] {
  const out: string[] = [];
  for (const c of runnerCommands(text)) {
    const name = c.target ? PACKAGE_SPEC.exec(c.target.word)?.[1] : undefined;
    if (name && !name.startsWith("@")) out.push(name);
    if (script && c.first >= 0 && NAME.test(c.words[c.first] ?? "")) out.push(c.words[c.first]!);
  }
  return out;
}

/**
 * The packages `text` hands a runner by name (`npx -y @scope/pkg@1`, `pnpm dlx pkg`): the
 * runner runs an installed copy's own bin, whatever that bin is called, so the package
 * folder itself is what runs.
 */
export function packagesRun(text: string): string[] {
  return runnerCommands(text).flatMap((c) => {
    const name = c.target?.viaExec ? PACKAGE_SPEC.exec(c.target.word)?.[1] : undefined;
    return name ? [name] : [];
  });
}

/** Node's options that load a module before the program, and the module they name. */
const PRELOAD =
  /(?:^|[\s"'=])(?:-r|--require|--import|--loader|--experimental-loader)(?:=|[ \t]+)["']?([^\s"'`;|&()]+)/g;

/**
 * The packages node preloads by name: `node -r dotenv/config srv.js`, `--import tsx`,
 * `--loader ts-node/esm`, and the same options in NODE_OPTIONS (a settings' or a server's
 * `env`, which every node it starts obeys). Node resolves them like require() from the
 * folder it runs in, so the project's node_modules copy is the one that runs. A relative
 * path is a word like any other (config-named.ts); a bare one's package name is returned.
 */
export function nodePreloads(text: string): string[] {
  return [...text.matchAll(PRELOAD)].flatMap((m) => {
    const spec = m[1]!;
    if (/^[./~$]|^[a-z]+:/i.test(spec)) return [];
    const name = /^(@[^/]+\/[^/]+|[^/]+)/.exec(spec)?.[1];
    return name ? [name] : [];
  });
}

/**
 * Where a runner finds an installed package `<name>`: `node_modules/<name>` of `dir` and of
 * each folder above it, up to the first that exists, absent ones too (a job must not make one).
 */
export function packageEntries(name: string, dir: string, workdir: string): string[] {
  return nodeModulesUp(join("node_modules", name), dir, workdir);
}

/**
 * `rel` in `dir` and in each folder above it up to the work tree's root, nearest first,
 * up to the first that exists: node's and npm's own lookup order for node_modules.
 */
function nodeModulesUp(rel: string, dir: string, workdir: string): string[] {
  const out: string[] = [];
  for (let d = dir; d === workdir || isWithin(d, workdir); d = dirname(d)) {
    const p = join(d, rel);
    out.push(p);
    if (entryExists(p) || d === workdir) break;
  }
  return out;
}

/**
 * The package folder (`…/node_modules/<pkg>` or `…/node_modules/@scope/<pkg>`) that holds
 * `abs`, inside the work tree, or null. A bin's file requires the rest of its package
 * (`require("../lib/cli")`): protecting the file alone would leave the code it runs open.
 */
export function packageRootOf(abs: string, workdir: string): string | null {
  for (let d = dirname(abs); isWithin(d, workdir); d = dirname(d)) {
    const parent = dirname(d);
    const name = basename(d);
    if (basename(parent) === "node_modules") return name.startsWith(".") || name.startsWith("@") ? null : d;
    if (basename(parent).startsWith("@") && basename(dirname(parent)) === "node_modules") return d;
  }
  return null;
}

/**
 * Where a package runner looks for `<name>`: `node_modules/.bin/<name>` of `dir`, then of
 * each folder above it (up to the work tree's root), first found first run (npm puts them
 * on PATH in that order). Each place up to the first entry there, absent ones too: a job
 * that makes `node_modules/.bin/node` nearer than the `node` the script meant is what runs.
 */
export function binEntries(name: string, dir: string, workdir: string): string[] {
  return nodeModulesUp(join("node_modules", ".bin", name), dir, workdir);
}

/**
 * Package managers' own settings, read from the folder they run in and each folder above
 * it whenever they run: npm's (and pnpm's, yarn 1's) `.npmrc` (`script-shell`,
 * `node-options`), yarn's `.yarnrc` (`yarn-path`) and `.yarnrc.yml` (`yarnPath`), pnpm's
 * `pnpm-workspace.yaml` settings and `.pnpmfile.cjs`, bun's `bunfig.toml` (`preload`):
 * each runs a program of its choosing before the script a configuration asked for. Yarn
 * Berry also exports `.env.yarn` into every `yarn run` (`NODE_OPTIONS=--require …`) and
 * preloads its Plug'n'Play loader, `.pnp.cjs` and `.pnp.loader.mjs`, into every node it
 * starts: all three are git-ignored code or settings of the run.
 */
const MANAGER_FILES: Readonly<Record<string, readonly string[]>> = {
  npm: [".npmrc"],
  pnpm: [".npmrc", "pnpm-workspace.yaml", ".pnpmfile.cjs"],
  yarn: [".npmrc", ".yarnrc", ".yarnrc.yml", ".env.yarn", ".pnp.cjs", ".pnp.loader.mjs"],
  // bun loads the environment files of the folder it runs in into every `bun file` and
  // `bun test`, and every program it starts inherits them (NODE_OPTIONS, PATH, PYTHONPATH).
  bun: [
    "bunfig.toml",
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.development.local",
    ".env.production.local",
    ".env.test.local",
  ],
};
/**
 * Python's project managers, by what `<manager> run x` in a hook reads: pipenv runs the
 * Pipfile's `[scripts]`, loads the project's `.env` into every run (PYTHONPATH, a
 * sitecustomize it imports) and takes a `.venv` of the project (a folder, or a file naming
 * one) for the virtualenv whose python runs; poetry takes an existing `.venv` of the
 * project too (and `poetry.toml` may put it there); uv runs the project's `.venv`.
 */
const PYTHON_MANAGER_FILES: Readonly<Record<string, readonly string[]>> = {
  pipenv: ["Pipfile", ".env", ".venv"],
  poetry: ["poetry.toml", ".venv"],
  uv: [".venv"],
};
const MANAGER_ALIAS: Readonly<Record<string, string>> = { npx: "npm", pnpx: "pnpm", bunx: "bun" };

/** A table's own row for a word of a command, never an Object.prototype member (`constructor`, `toString`). */
function ownRow<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
/** Options that send a manager to another folder: `npm --prefix x`, `pnpm -C x`, `yarn --cwd x`, `bun --cwd x`. */
const MANAGER_DIR = ["--prefix", "-C", "--dir", "--cwd"];

/** The settings files (absent ones too) the package managers among `tokens` read, inside the work tree. */
export function managerFiles(tokens: readonly string[], project: string, workdir: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const w = basename(tokens[i]!);
    const files = ownRow(PYTHON_MANAGER_FILES, w) ?? ownRow(MANAGER_FILES, ownRow(MANAGER_ALIAS, w) ?? w);
    if (!files) continue;
    let dir = project;
    for (let j = i + 1; j < tokens.length && tokens[j]!.startsWith("-"); j++) {
      const to = optionValue(tokens, j, MANAGER_DIR);
      if (to) dir = resolve(dir, to);
    }
    for (let d = dir; d === workdir || isWithin(d, workdir); d = dirname(d)) {
      for (const f of files) out.add(join(d, f));
      if (d === workdir) break;
    }
  }
  return [...out];
}

/**
 * The folders a command sets a path-list variable to (`PYTHONPATH=src python3 -m x`, an MCP
 * server's env map `"NODE_PATH": "."`: commandTokens splits `NAME=value` in two), as
 * written, resolved from `project`.
 */
export function pathListSet(tokens: readonly string[], name: string, project: string, home?: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < tokens.length; i++)
    if (tokens[i] === name)
      for (const d of tokens[i + 1]!.split(":")) if (d) out.push(resolveUserPath(d, project, home));
  return out;
}

/** `abs` and every link and file its chain of links reaches inside the work tree. */
export function linkChain(abs: string, workdir: string): string[] {
  const out: string[] = [];
  let p = abs;
  for (let n = 0; n <= MAX_LINKS && isWithin(p, workdir); n++) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(p);
    } catch {
      break; // a dangling link: it is named, its missing target is not there to protect
    }
    if (!st.isSymbolicLink() && !st.isFile()) break;
    out.push(p);
    if (!st.isSymbolicLink()) break;
    const to = readlinkSync(p);
    p = isAbsolute(to) ? resolve(to) : resolve(dirname(p), to);
  }
  return out;
}

/**
 * What a path outside the tree is inside it (a configuration kept there, a program it names): the file its links (or a linked
 * folder above it, as `~/.claude` linked to a dotfiles checkout) lead to, and the links of
 * that chain that lie in the tree; a delegate that rewrote either rewrote the configuration.
 */
export function linkedIntoTree(file: string, workdir: string): string[] {
  const out: string[] = [];
  try {
    out.push(realpathSync(file));
  } catch {
    return out; // absent or a dangling link: nothing is read there
  }
  let at = file;
  for (let hop = 0; hop <= MAX_LINKS && !isWithin(at, workdir); hop++) {
    try {
      if (!lstatSync(at).isSymbolicLink()) break;
      const to = readlinkSync(at);
      at = isAbsolute(to) ? resolve(to) : resolve(dirname(at), to);
    } catch {
      break;
    }
  }
  if (isWithin(at, workdir)) out.push(...linkChain(at, workdir));
  return out;
}

/** A folder put on PATH, with the config's line that puts it there (for a refusal's text). */
export interface PathDir {
  dir: string;
  line: string;
}

/** The config's own folder as hosts spell it: `$PWD`, `${PWD}`, `$(pwd)`, `` `pwd` ``, mise's `{{config_root}}`. */
const HERE = /^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`|\{\{\s*config_root\s*\}\})(?=\/|$)/;
/** The user's home, as a shell spells it: kept as `~/` for resolveUserPath. */
const HOME_VAR = /^(\$HOME|\$\{HOME\})(?=\/|$)/;
/** Any other leading `$VAR/`, `${VAR}/`, `$VAR$/`: the project dir a host sets (`${workspaceFolder}`). */
const PROJECT_VAR = /^\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?\$?(?=\/)/;
/** A shell word: quoted runs and unquoted characters up to a blank or a command separator. */
const WORD = /(?:"[^"]*"|'[^']*'|[^\s;&|"'])+/g;

/** One folder as written, quotes joined as the shell joins them; null for one that names another variable (`$PATH`). */
function folderOf(word: string): string | null {
  const d = word.replace(/["']/g, "").replace(HERE, ".").replace(HOME_VAR, "~").replace(PROJECT_VAR, ".");
  return d && !/[${}`]/.test(d) ? d : null;
}

/** The shell words of `text` (one line), up to a comment. */
function shellWords(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(WORD)) {
    if (m[0].startsWith("#")) break;
    out.push(m[0]);
  }
  return out;
}

/**
 * The folder direnv's stdlib `layout <name>` puts first on PATH, where it is not under
 * `.direnv` (direnv_layout_dir). `layout pipenv` adds `$(pipenv --venv)/bin`, and pipenv
 * takes the project's `.venv` for the virtualenv whenever it is there (a folder, or a file
 * naming one): poetry's and uv's in-project virtualenv is `.venv` too. Named whole: its
 * bin/ is first on PATH, its activate and site-packages run.
 */
const DIRENV_LAYOUT: Readonly<Record<string, string>> = {
  node: "node_modules/.bin",
  php: "vendor/bin",
  pipenv: ".venv",
  poetry: ".venv",
  uv: ".venv",
};

/** The folders one line puts on PATH, as written. */
function lineDirs(line: string): string[] {
  const out: string[] = [];
  const words = shellWords(line);
  for (let i = 0; i < words.length; i++) {
    // direnv: `PATH_add dir…`, `path_add VAR dir…`; every argument is a folder.
    if (words[i] === "PATH_add") out.push(...words.slice(i + 1));
    if (words[i] === "path_add" && words[i + 1] === "PATH") out.push(...words.slice(i + 2));
    // `layout node` (node_modules/.bin), `layout php` (vendor/bin), any other layout (python,
    // go, ruby, perl: a bin/ under direnv's own .direnv/, its name the interpreter's version,
    // the venv's libraries beside it); `load_prefix x` (x/bin).
    const layout = /^layout_(\w+)$/.exec(words[i]!)?.[1] ?? (words[i] === "layout" ? words[i + 1] : undefined);
    if (layout) out.push(ownRow(DIRENV_LAYOUT, layout) ?? ".direnv");
    // `layout anaconda ./env`: a prefix given as a path is the environment conda activates (its bin/, its activate.d scripts).
    const prefix = words[i] === "layout" ? words[i + 2] : words[i + 1];
    if (layout === "anaconda" && prefix?.includes("/")) out.push(prefix);
    if (words[i] === "load_prefix" && words[i + 1]) out.push(`${words[i + 1]}/bin`);
  }
  // `PATH=a:b:$PATH`, `export PATH="$PWD/bin:$PATH"`, JSON's `"PATH": "…"`, TOML's `PATH = "…"`.
  for (const m of line.matchAll(/\bPATH["']?\s*[:=]\s*/g)) {
    const value = shellWords(line.slice(m.index + m[0].length))[0] ?? "";
    out.push(...value.replace(/["']/g, "").split(":"));
  }
  // mise: `_.path = "./bin"` or `_.path = ["./bin", "{{config_root}}/tools"]`.
  const mise = /\b_\.path\s*=\s*(\[[^\]]*\]?|"[^"]*"|'[^']*')/.exec(line)?.[1];
  if (mise) for (const q of mise.matchAll(/"([^"]*)"|'([^']*)'/g)) out.push(q[1] ?? q[2] ?? "");
  // mise's and asdf's `path:` versions (.tool-versions `node path:./tools/node`, mise.toml
  // `node = "path:./x"`): the folder's bin/ goes first on PATH; the folder is named whole.
  for (const m of line.matchAll(/(?:^|[\s"'[,=])path:([^\s"',\]#]+)/g)) out.push(m[1]!);
  return out;
}

/**
 * The files direnv's stdlib loads from an allowed `.envrc` without asking again
 * (measured with direnv 2.32): `source_env f` and `source_env_if_exists f` run f as shell
 * (a folder: its .envrc); `dotenv [f]` and `dotenv_if_exists [f]` take f's (else `.env`'s)
 * variables as the shell's environment (`NODE_OPTIONS`, `GIT_CONFIG_*`: programs run);
 * `use nix [f]` evaluates shell.nix and default.nix (or f), `use flake` flake.nix and
 * flake.lock, their shellHook run; `use vim [f]` has the direnv.vim plugin source f (else
 * `.vimrc.local`) as the editor starts there. As written, from the .envrc's folder; `up`: the names
 * `source_up [name]` looks for in each folder above it (`.envrc` by default).
 */
export function direnvLoads(text: string): { files: DirenvFile[]; up: string[] } {
  const files: DirenvFile[] = [];
  const up: string[] = [];
  for (const command of text.split(/&&|\|\||[;|\n]/)) {
    const words = shellWords(command).map((w) => w.replace(/["']/g, ""));
    while (/^(then|do|else|\{|\(|!)$/.test(words[0] ?? "")) words.shift();
    const [w, a, b] = words;
    const arg = a && !a.startsWith("-") ? a : undefined;
    if (/^source_env(_if_exists)?$/.test(w ?? "") && arg) files.push({ path: arg, inDir: ".envrc" });
    else if (/^dotenv(_if_exists)?$/.test(w ?? "")) files.push({ path: arg ?? ".env", inDir: ".env" });
    else if (/^source_up(_if_exists)?$/.test(w ?? "")) up.push(arg ?? ".envrc");
    else if (w === "use" && a === "nix")
      for (const f of b ? [b] : ["shell.nix", "default.nix"]) files.push({ path: f, inDir: "default.nix" });
    else if (w === "use" && a === "vim") files.push({ path: b ?? ".vimrc.local", inDir: ".vimrc.local" });
    else if (w === "use" && a === "flake") {
      const dir = b?.replace(/#.*$/, "") || ".";
      for (const f of ["flake.nix", "flake.lock"]) files.push({ path: `${dir}/${f}`, inDir: f });
    }
  }
  return {
    files: files.flatMap((f) => {
      const path = folderOf(f.path);
      return path ? [{ path, inDir: f.inDir }] : [];
    }),
    up,
  };
}

/** A file direnv loads, as written; `inDir`: what it reads when the path is a folder (`dotenv sub`: sub/.env). */
export interface DirenvFile {
  path: string;
  inDir: string;
}

/** Folders a config puts on PATH (`PATH_add bin`, `PATH=./bin:$PATH`, `"PATH": "${workspaceFolder}/bin:…"`, mise's `_.path`). */
export function pathDirs(text: string): PathDir[] {
  const out: PathDir[] = [];
  for (const line of text.split("\n"))
    for (const w of lineDirs(line)) {
      const dir = folderOf(w);
      if (dir) out.push({ dir, line: line.trim().slice(0, 200) });
    }
  return out;
}

/** The folders `dirs` name, from `base`, inside the work tree or the work tree itself, whether they exist or not. */
export function pathFolders(dirs: PathDir[], base: string, workdir: string, home?: string): PathDir[] {
  const out: PathDir[] = [];
  for (const d of dirs) {
    const abs = resolveUserPath(d.dir, base, home);
    // Absent too: named, so a folder the job makes there is found after it (not bound: nothing to bind).
    if (abs === workdir || isWithin(abs, workdir)) out.push({ dir: abs, line: d.line });
  }
  return out;
}

/**
 * Build runners, one row each: the files each reads from the folder it runs in (`make
 * lint` runs the Makefile's recipe), and its options that name another file (`-f x.mk`)
 * or another folder (`-C sub`). Matched on the command word's base name, so
 * `/usr/bin/make`, `command make`, `env make` and `sh -c "make x"` count the same.
 */
interface RunnerRow {
  files: readonly string[];
  file: readonly string[];
  dir: readonly string[];
  /** The files a runner file includes, as written, and whether they are read from the runner's folder (make) or the including file's. */
  includes?: { words: (text: string) => string[]; from: "runner" | "file" };
  /** Options naming more folders an include is looked for in (make's `-I`). */
  search?: readonly string[];
}

/** GNU make's `include a.mk b.mk`, `-include x.mk`, `sinclude y.mk`, continued lines joined as make joins them (from make's folder; a word with `$(…)` or a pattern is not followed). */
const makeIncludes = (text: string) =>
  [...text.replace(/\\\r?\n/g, " ").matchAll(/^[ ]*(?:-|s)?include[ \t]+([^\n#]*)/gm)]
    .flatMap((m) => m[1]!.trim().split(/\s+/))
    .filter((w) => w !== "" && !/[$%*?[]/.test(w));
/**
 * just's `import 'x.just'`, `import? 'y'`, `mod name 'path'` (from the justfile's folder),
 * and the environment file its `set dotenv-load` exports into every recipe (`.env`, or
 * `set dotenv-filename`/`dotenv-path`'s): `NODE_OPTIONS`, `PATH` there run programs.
 */
const justIncludes = (text: string) => [
  ...[...text.matchAll(/^[ \t]*(?:import\??|mod\??[ \t]+[\w-]+)[ \t]+(["'])([^"'\n]+)\1/gm)].map((m) => m[2]!),
  ...(/^[ \t]*set[ \t]+dotenv-load\b/m.test(text) ? [".env"] : []),
  ...[...text.matchAll(/^[ \t]*set[ \t]+dotenv-(?:filename|path)[ \t]*:=[ \t]*(["'])([^"'\n]+)\1/gm)].map((m) => m[2]!),
];
/**
 * Task's `includes: { x: ./other }` and `x: { taskfile: ./other.yml }` (from the Taskfile's
 * folder), and the environment files its `dotenv:` list loads into every task.
 */
const taskIncludes = (text: string) => [
  ...[
    ...text.matchAll(
      /^[ \t]+(?:taskfile:[ \t]*|[\w-]+:[ \t]+)(["']?)(\.{0,2}\/?[\w./-]+\.ya?ml|\.{1,2}\/[\w./-]*)\1[ \t]*$/gm,
    ),
  ].map((m) => m[2]!),
  ...taskDotenv(text),
];

/** The files of a Taskfile's `dotenv: ['.env', 'x.env']` (flow or block list), as written. */
function taskDotenv(text: string): string[] {
  const m = /^[ \t]*dotenv:[ \t]*(\[[^\]\n]*\]|\n(?:[ \t]+-[^\n]*\n?)+)/m.exec(text);
  if (!m) return [];
  return m[1]!
    .replace(/[[\]]/g, "")
    .split(/,|\n/)
    .map((w) =>
      w
        .replace(/^[ \t]*-?[ \t]*/, "")
        .trim()
        .replace(/^(["'])(.*)\1$/, "$2"),
    )
    .filter((w) => w !== "" && !w.includes("{{"));
}

const RUNNERS: Readonly<Record<string, RunnerRow>> = {
  make: {
    files: ["GNUmakefile", "makefile", "Makefile"],
    file: ["-f", "--file", "--makefile"],
    dir: ["-C", "--directory"],
    includes: { words: makeIncludes, from: "runner" },
    search: ["-I", "--include-dir"],
  },
  just: {
    files: ["justfile", "Justfile", ".justfile"],
    file: ["-f", "--justfile"],
    dir: ["-d", "--working-directory"],
    includes: { words: justIncludes, from: "file" },
  },
  task: {
    files: [
      "Taskfile.yml",
      "Taskfile.yaml",
      "taskfile.yml",
      "taskfile.yaml",
      "Taskfile.dist.yml",
      "Taskfile.dist.yaml",
    ],
    file: ["-t", "--taskfile"],
    dir: ["-d", "--dir"],
    includes: { words: taskIncludes, from: "file" },
  },
  rake: { files: ["Rakefile", "rakefile", "Rakefile.rb"], file: ["-f", "--rakefile"], dir: ["-C", "--directory"] },
  ninja: { files: ["build.ninja"], file: ["-f"], dir: ["-C"] },
  "cargo-make": { files: ["Makefile.toml"], file: ["--makefile"], dir: ["--cwd"] },
  mage: { files: ["magefile.go"], file: [], dir: ["-d"] },
  invoke: { files: ["tasks.py", "invoke.yaml", "invoke.yml"], file: [], dir: ["-r", "--search-root"] },
  // nox and tox reuse the virtualenvs they made (.nox/<session>, .tox/<env>): their python and site-packages run.
  nox: { files: ["noxfile.py", ".nox"], file: ["-f", "--noxfile"], dir: [] },
  tox: { files: ["tox.ini", "tox.toml", ".tox"], file: ["-c", "--conf"], dir: ["--root"] },
  // JavaScript task runners: the task file is the program (gulp and grunt load it as a module).
  gulp: {
    files: ["gulpfile.js", "gulpfile.cjs", "gulpfile.mjs", "gulpfile.ts", "gulpfile.babel.js", "Gulpfile.js"],
    file: ["-f", "--gulpfile"],
    dir: ["--cwd"],
  },
  grunt: {
    files: ["Gruntfile.js", "gruntfile.js", "Gruntfile.coffee", "Gruntfile.ts"],
    file: ["--gruntfile"],
    dir: ["--base"],
  },
  // Python project managers whose `run <name>` runs a script their file defines, with the interpreter it names.
  hatch: { files: ["hatch.toml", "pyproject.toml"], file: [], dir: [] },
  // pdm's virtualenv is the project's .venv by default; pixi's environments live in .pixi/.
  pdm: {
    files: ["pyproject.toml", "pdm.toml", ".pdm-python", ".pdm.toml", ".venv"],
    file: [],
    dir: ["-p", "--project"],
  },
  pixi: { files: ["pixi.toml", "pyproject.toml", ".pixi"], file: ["--manifest-path"], dir: [] },
};
/** Other names of the same runners: `gmake`, `makers` and `cargo make` (cargo-make), `inv`. */
const RUNNER_ALIAS: Readonly<Record<string, string>> = { gmake: "make", makers: "cargo-make", inv: "invoke" };

function runnerAt(tokens: readonly string[], i: number): { name: string; next: number } | null {
  const w = basename(tokens[i]!);
  if (w === "cargo" && tokens[i + 1] === "make") return { name: "cargo-make", next: i + 2 };
  const name = ownRow(RUNNER_ALIAS, w) ?? w;
  return Object.hasOwn(RUNNERS, name) ? { name, next: i + 1 } : null;
}

/** The value of option `opt` at tokens[j] (`-f x`, `-fx`; `--file=x` arrives split at `=`), or null. */
function optionValue(tokens: readonly string[], j: number, opts: readonly string[]): string | null {
  const t = tokens[j]!;
  for (const o of opts) {
    if (t === o) return tokens[j + 1] ?? null;
    if (!o.startsWith("--") && t.startsWith(o) && t.length > o.length) return t.slice(o.length);
  }
  return null;
}

/**
 * The files of the tree that the build runners among `tokens` (a command line's words,
 * options kept: config-named.ts commandTokens) read, where they exist: the runner's own
 * file names in the folder it runs in (`project`, or where `-C` sends it) and the files
 * `-f` names; and the files those include (includedBy), absent ones too.
 */
export function runnerFiles(tokens: readonly string[], project: string): string[] {
  const out = new Set<string>();

  for (let i = 0; i < tokens.length; i++) {
    const hit = runnerAt(tokens, i);
    if (!hit) continue;
    const row = RUNNERS[hit.name]!;
    let dir = project;
    const named: string[] = [];
    const searched: string[] = [];
    // Options may follow targets (GNU make): the rest of the command is read.
    for (let j = hit.next; j < tokens.length && !runnerAt(tokens, j); j++) {
      const d = optionValue(tokens, j, row.dir);
      if (d) dir = resolve(dir, d);
      const f = optionValue(tokens, j, row.file);
      if (f) named.push(f);
      const s = row.search ? optionValue(tokens, j, row.search) : null;
      if (s) searched.push(s);
    }
    // Every name the runner tries, there or not: make reads the first of GNUmakefile,
    // makefile and Makefile that exists, so a new GNUmakefile replaces the one it read.
    const own = [...row.files.map((n) => join(dir, n)), ...named.map((f) => resolve(dir, f))];
    // This run's makefiles alone: another run's remake sources are no makefiles of this one.
    const read = new Set(own);
    const search = searched.map((d) => resolve(dir, d));
    for (const p of own) includedBy(p, row, { dir, search }, read);
    for (const p of read) out.add(p);
    if (hit.name === "make") for (const p of read) for (const src of makeRemakeSources(p)) out.add(src);
  }
  return [...out];
}

/**
 * GNU make's built-in suffixes (default_suffixes in its source: what `make -p` lists as
 * .SUFFIXES) and its terminal rules' sources (`%:: %,v`, `%:: RCS/%,v`, `%:: RCS/%`,
 * `%:: s.%`, `%:: SCCS/s.%`).
 */
const MAKE_SUFFIXES =
  ".out .a .ln .o .c .cc .C .cpp .p .f .F .m .r .y .l .ym .yl .s .S .mod .sym .def .h .info .dvi .tex .texinfo .texi .txinfo .w .ch .web .sh .elc .el".split(
    " ",
  );

/**
 * The files make may remake `makefile` from before it runs anything: it brings every
 * makefile it read up to date first, with its built-in rules too (`%: %.sh` is `cat $< >$@`),
 * and restarts on the result. A new `Makefile.sh` (or `local.mk.sh` for an absent
 * `-include local.mk`) becomes the makefile: each is watched, there or not.
 */
function makeRemakeSources(makefile: string): string[] {
  const dir = dirname(makefile);
  const name = basename(makefile);
  return [
    ...MAKE_SUFFIXES.map((x) => `${makefile}${x}`),
    `${makefile},v`,
    join(dir, "RCS", `${name},v`),
    join(dir, "RCS", name),
    join(dir, `s.${name}`),
    join(dir, "SCCS", `s.${name}`),
  ];
}

/** Runner files read per command, included ones too: past it the job is refused, never run with the rest unread. */
const MAX_INCLUDED = 1000;
const MAX_INCLUDE_BYTES = 256 * 1024;

/**
 * Every file `file` includes by the runner's own include directive (row.includes), looked
 * for where the runner looks (its folder, then make's `-I` folders), and what those
 * include in turn, that exists: the runner reads them as its own file (`include
 * rules.mk` defines the recipe `make lint` runs), so they are one reader's, the runner row's.
 * A folder (Task's `includes: ./sub`) stands for the runner's files in it.
 */
function includedBy(
  file: string,
  row: RunnerRow,
  where: { dir: string; search: readonly string[] },
  out: Set<string>,
): void {
  const { dir } = where;
  if (!row.includes) return;
  const queue = [file];
  for (let read = 0; queue.length > 0; read++) {
    if (read >= MAX_INCLUDED)
      throw new DlError(
        "bad_input",
        `${file} includes more than ${MAX_INCLUDED} files: too many for dl to read what its runner runs; run this job on a copy`,
        { failure_kind: "workdir_forbidden", reason: "too_large" },
      );
    const f = queue.shift()!;
    const text = readRegularHead(f, MAX_INCLUDE_BYTES);
    if (text === null) continue;
    const base = row.includes.from === "runner" ? dir : dirname(f);
    for (const w of row.includes.words(text)) {
      // Where the runner looks for it: its own folder first, then each search folder (make's -I).
      const places = isAbsolute(w) ? [resolve(w)] : [base, ...where.search].map((d) => resolve(d, w));
      for (const abs of places) {
        // Absent (make's `-include local.mk` before anyone wrote it): named all the same, so a job that makes it is found.
        if (!entryExists(abs)) out.add(abs);
        for (const p of [abs, ...row.files.map((n) => join(abs, n))]) {
          if (out.has(p) || readRegularHead(p, MAX_INCLUDE_BYTES) === null) continue;
          out.add(p);
          queue.push(p);
        }
      }
    }
  }
}
