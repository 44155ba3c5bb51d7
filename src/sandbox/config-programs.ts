import { lstatSync, readlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isWithin } from "../sys/paths.ts";

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

/** The bin names `text` runs through a package runner; `script` true for a package.json script's body (its commands' first words count). */
export function binsRun(text: string, script: boolean): string[] {
  const out: string[] = [];
  for (const command of text.split(/&&|\|\||[;|\n]/)) {
    const t = command
      .trim()
      .split(/[\s"'`()]+/)
      .filter(Boolean);
    const first = t.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)); // `CI=1 eslint .`
    for (let i = Math.max(first, 0); i < t.length; i++) {
      const tool = basename(t[i]!);
      let j = i + 1;
      if (/^(npm|pnpm|yarn|bun)$/.test(tool) && EXEC_VERB.test(t[j] ?? "")) j++;
      // `yarn <bin>`: its next word taken whatever it is (binEntry names only a .bin entry that exists).
      else if (tool === "yarn") j += t[j] === "run" ? 1 : 0;
      else if (!BIN_RUNNER.test(tool)) continue;
      while (t[j]?.startsWith("-")) j++;
      if (t[j] === "--") j++;
      if (t[j] && NAME.test(t[j]!)) out.push(t[j]!);
    }
    if (script && first >= 0 && NAME.test(t[first] ?? "")) out.push(t[first]!);
  }
  return out;
}

/** `node_modules/.bin/<name>` in `dir` or the nearest folder above it (up to the work tree's root) that has one. */
export function binEntry(name: string, dir: string, workdir: string): string | null {
  for (let d = dir; d === workdir || isWithin(d, workdir); d = dirname(d)) {
    const p = join(d, "node_modules", ".bin", name);
    try {
      lstatSync(p);
      return p;
    } catch {
      // not here: npm looks in the folder above
    }
    if (d === workdir) break;
  }
  return null;
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

/** A folder put on PATH, with the config's line that puts it there (for a refusal's text). */
export interface PathDir {
  dir: string;
  line: string;
}

/** The config's own folder as hosts spell it: `$PWD`, `${PWD}`, `$(pwd)`, `` `pwd` ``, mise's `{{config_root}}`. */
const HERE = /^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`|\{\{\s*config_root\s*\}\})(?=\/|$)/;
/** Any other leading `$VAR/`, `${VAR}/`, `$VAR$/`: the project dir a host sets (`${workspaceFolder}`). */
const PROJECT_VAR = /^\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?\$?(?=\/)/;
/** A shell word: quoted runs and unquoted characters up to a blank or a command separator. */
const WORD = /(?:"[^"]*"|'[^']*'|[^\s;&|"'])+/g;

/** One folder as written, quotes joined as the shell joins them; null for one that names another variable (`$PATH`). */
function folderOf(word: string): string | null {
  const d = word.replace(/["']/g, "").replace(HERE, ".").replace(PROJECT_VAR, ".");
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

/** The folders one line puts on PATH, as written. */
function lineDirs(line: string): string[] {
  const out: string[] = [];
  const words = shellWords(line);
  for (let i = 0; i < words.length; i++) {
    // direnv: `PATH_add dir…`, `path_add VAR dir…`; every argument is a folder.
    if (words[i] === "PATH_add") out.push(...words.slice(i + 1));
    if (words[i] === "path_add" && words[i + 1] === "PATH") out.push(...words.slice(i + 2));
  }
  // `PATH=a:b:$PATH`, `export PATH="$PWD/bin:$PATH"`, JSON's `"PATH": "…"`, TOML's `PATH = "…"`.
  for (const m of line.matchAll(/\bPATH["']?\s*[:=]\s*/g)) {
    const value = shellWords(line.slice(m.index + m[0].length))[0] ?? "";
    out.push(...value.replace(/["']/g, "").split(":"));
  }
  // mise: `_.path = "./bin"` or `_.path = ["./bin", "{{config_root}}/tools"]`.
  const mise = /\b_\.path\s*=\s*(\[[^\]]*\]?|"[^"]*"|'[^']*')/.exec(line)?.[1];
  if (mise) for (const q of mise.matchAll(/"([^"]*)"|'([^']*)'/g)) out.push(q[1] ?? q[2] ?? "");
  return out;
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
export function pathFolders(dirs: PathDir[], base: string, workdir: string): PathDir[] {
  const out: PathDir[] = [];
  for (const d of dirs) {
    const abs = isAbsolute(d.dir) ? resolve(d.dir) : resolve(base, d.dir);
    // Absent too: named, so a folder the job makes there is found after it (not bound: nothing to bind).
    if (abs === workdir || isWithin(abs, workdir)) out.push({ dir: abs, line: d.line });
  }
  return out;
}

/** Build runners and the files each reads from the folder it runs in: `make lint` runs the Makefile's recipe. */
const RUNNER_FILES: Readonly<Record<string, readonly string[]>> = {
  make: ["GNUmakefile", "makefile", "Makefile"],
  gmake: ["GNUmakefile", "makefile", "Makefile"],
  just: ["justfile", "Justfile", ".justfile"],
  task: ["Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml", "Taskfile.dist.yaml"],
  rake: ["Rakefile", "rakefile", "Rakefile.rb"],
};
/** A file a runner may be given instead of its own (`make -f build.mk`, `just --justfile ci.just`, `task -t ci.yml`). */
const RUNNER_FILE_EXT: Readonly<Record<string, RegExp>> = {
  make: /\.(mk|mak|make)$/i,
  gmake: /\.(mk|mak|make)$/i,
  just: /\.just$/i,
  task: /\.ya?ml$/i,
  rake: /\.(rake|rb)$/i,
};

function kindOf(abs: string): "file" | "dir" | null {
  try {
    const st = lstatSync(abs);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : null;
  } catch {
    return null; // not here: the runner finds nothing by this name either
  }
}

/**
 * The files the build runners among `words` read (and so run), where they exist: their
 * own files in `project`, and, for the words after a runner (options are already
 * dropped), the runner's files in a folder it may be pointed at (`make -C tools`) and a
 * file of its kind it may be given (`make -f build.mk`). A word that is neither names
 * nothing here, so reading every later word protects more, never less.
 */
export function runnerFiles(words: readonly string[], project: string): string[] {
  const out = new Set<string>();
  const filesIn = (dir: string, names: readonly string[]) => {
    for (const n of names) if (kindOf(join(dir, n)) === "file") out.add(join(dir, n));
  };
  const runners: string[] = [];
  for (const w of words) {
    const runner = basename(w);
    if (Object.hasOwn(RUNNER_FILES, runner)) {
      if (!runners.includes(runner)) runners.push(runner);
      filesIn(project, RUNNER_FILES[runner]!);
      continue;
    }
    if (runners.length === 0) continue;
    const abs = resolve(project, w);
    const kind = kindOf(abs);
    for (const r of runners) {
      if (kind === "dir") filesIn(abs, RUNNER_FILES[r]!);
      else if (kind === "file" && RUNNER_FILE_EXT[r]!.test(w)) out.add(abs);
    }
  }
  return [...out];
}
