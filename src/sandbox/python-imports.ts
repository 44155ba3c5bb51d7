import { readdirSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { entryExists, isRegularFile, readRegularHead } from "../sys/file-head.ts";
import { isWithin, resolveUserPath } from "../sys/paths.ts";
import { pathListSet } from "./config-programs.ts";

/**
 * What a protected Python command imports of the work tree, read as Python finds modules.
 *
 * `sys.path[0]` comes before the standard library and every installed package: the
 * script's own folder for `python3 tools/ctx.py`, the folder the host runs it in for
 * `python3 -m pytest`, `-c` and standard input. That folder is an import root: a new
 * `json.py`, `pytest.py`, package or extension there replaces a module the command
 * imports, and a new `*.dist-info` there is an installed distribution whose entry points
 * pytest and flake8 load as plugins. So a root's new modules are the host's code: the tree
 * guard moves them out after a job and the write tools refuse them. A protected script's
 * own imports of the tree (`import helper` beside it) are named like the files it runs.
 */

/** `python`, `python3`, `python3.11`. */
const PYTHON = /^python(\d+(\.\d+)*)?$/;
/** A file Python imports as a module. */
const PY_MODULE_FILE = /\.(py|pyc|pyo|pyw|so|pyd)$/i;
/** An installed distribution's metadata: its entry points are plugins tools load. */
const PY_METADATA_DIR = /\.(dist-info|egg-info)$/i;

/**
 * The python commands among `tokens` (options kept): the folders they import from first,
 * the folder the host runs them in (`project`) for `-m`, `-c` and `-`, else the script's
 * folder, resolved from `bases` (only folders inside `workdir`); and their interpreters,
 * named directly or through a variable the text assigns (pre-commit's own hook runs
 * `"$INSTALL_PYTHON" -mpre_commit`); and the modules they run with `-m`.
 */
export function pythonCommands(
  tokens: readonly string[],
  bases: readonly string[],
  project: string,
  o: { workdir: string; home?: string },
): { roots: string[]; interpreters: string[]; modules: string[] } {
  const roots = new Set<string>();
  const interpreters = new Set<string>();
  const modules = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const interpreter = interpreterAt(tokens, i);
    if (!interpreter) continue;
    interpreters.add(interpreter);
    const code = codeAfter(tokens, i + 1);
    if (!("script" in code)) {
      roots.add(project);
      if ("module" in code && code.module) modules.add(code.module);
      continue;
    }
    for (const base of bases) {
      const abs = resolveUserPath(code.script, base, o.home);
      if (isRegularFile(abs)) roots.add(dirname(abs));
    }
  }
  // PYTHONPATH's folders come before the standard library too (`PYTHONPATH=src python3 -m app`).
  if (interpreters.size > 0) for (const d of pathListSet(tokens, "PYTHONPATH", project, o.home)) roots.add(d);
  return {
    roots: [...roots].filter((d) => isWithin(d, o.workdir)),
    interpreters: [...interpreters],
    modules: [...modules],
  };
}

/** The python interpreter tokens[i] runs: `python3`, `/usr/bin/python3.11`, or `$VAR` the text assigned one; else null. */
function interpreterAt(tokens: readonly string[], i: number): string | null {
  const t = tokens[i]!;
  if (PYTHON.test(basename(t))) return t;
  const variable = /^\$\{?([A-Za-z_]\w*)\}?$/.exec(t)?.[1];
  if (!variable) return null;
  // `VAR=value` arrives as the tokens VAR and value (commandTokens splits at `=`).
  for (let k = 0; k + 1 < i; k++)
    if (tokens[k] === variable && PYTHON.test(basename(tokens[k + 1]!))) return tokens[k + 1]!;
  return null;
}

/** What python runs after its options from `j`: a script, a module (`-m mod`, `-mmod`), or code from `-c` or standard input. */
type PythonCode = { script: string } | { module: string } | { inline: true };

function codeAfter(tokens: readonly string[], j: number): PythonCode {
  for (; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t === "-") return { inline: true };
    if (t === "--") return tokens[j + 1] ? { script: tokens[j + 1]! } : { inline: true };
    if (!t.startsWith("-")) return { script: t };
    if (t.startsWith("--")) {
      if (t === "--check-hash-based-pycs") j++;
      continue;
    }
    // Short options combine (`-Bm mod`): m and c end them; W and X take an argument.
    for (let k = 1; k < t.length; k++) {
      const c = t[k]!;
      if (c === "m") return { module: t.slice(k + 1) || (tokens[j + 1] ?? "") };
      if (c === "c") return { inline: true };
      if (c === "W" || c === "X") {
        if (k === t.length - 1) j++;
        break;
      }
    }
  }
  return { inline: true };
}

/**
 * The interpreter a Python source runs with as a script: its first line's (`#!/usr/bin/env
 * python3`), else `python3` for a `.py` file; null for a file that is no Python.
 */
export function pythonOf(file: string, text: string): string | null {
  const line =
    /^#![ \t]*([^\n]*)/
      .exec(text)?.[1]
      ?.trim()
      .split(/[ \t]+/) ?? [];
  let i = 0;
  if (basename(line[0] ?? "") === "env") {
    // env's own options and assignments come first: `env -S python3 -u`, `env -u X PY=1 python3`.
    for (i = 1; i < line.length && (/^-/.test(line[i]!) || /=/.test(line[i]!)); i++) if (line[i] === "-u") i++;
  }
  const word = line[i];
  if (word && PYTHON.test(basename(word))) return word;
  // `uv run --script`: uv's python runs it (PEP 723 scripts).
  if (word && basename(word) === "uv" && line[i + 1] === "run") return "python3";
  return /\.pyw?$/i.test(file) ? "python3" : null;
}

/**
 * `import a, b.c as d` and `from e.f import g` as statements, wherever one starts: a line,
 * after `;`, after a compound statement's `:` (`try: import x`); `from .h import i`: `.h`.
 */
const IMPORT_STATEMENT =
  /(?:^|[;:])[ \t]*(?:from[ \t]+(\.*[A-Za-z_][\w.]*|\.+)[ \t]+import\b|import[ \t]+([^\n#;]+))/gm;
/** `importlib.import_module("x")`, `__import__("x")`: a module named in a string. */
const IMPORT_CALL = /\b(?:import_module|__import__)\(\s*["']([A-Za-z_][\w.]*)["']/g;

/** The modules a Python source imports: absolute ones by their first name, relative ones (`.x`) as written. */
export function pythonImported(source: string): string[] {
  const text = source.replace(/\\\r?\n/g, " "); // a statement continued on the next line is one
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT_STATEMENT)) {
    if (m[1]) out.add(m[1].startsWith(".") ? m[1] : m[1].split(".")[0]!);
    else
      for (const part of m[2]!.split(","))
        out.add(
          part
            .trim()
            .split(/[\s.]/)[0]!
            .replace(/[()\\]/g, ""),
        );
  }
  for (const m of text.matchAll(IMPORT_CALL)) out.add(m[1]!.split(".")[0]!);
  return [...out].filter((n) => /^\.*[A-Za-z_]?[\w.]*$/.test(n) && n !== "");
}

/**
 * The files and package folders of the tree that `imports` (pythonImported of `file`) load
 * from the import roots a script can have: its own folder and the project's (relative
 * imports from the file's package). A package folder counts whole, as a program folder does.
 */
export function pythonModulesOf(file: string, imports: readonly string[], project: string, workdir: string): string[] {
  const out: string[] = [];
  for (const name of imports) {
    const dots = /^\.*/.exec(name)![0].length;
    let bases = [dirname(file), project];
    if (dots > 0) {
      let d = dirname(file);
      for (let k = 1; k < dots; k++) d = dirname(d);
      bases = [d];
    }
    const first = name.slice(dots).split(".")[0]!;
    if (first === "") continue;
    for (const base of bases) {
      for (const p of [join(base, `${first}.py`), join(base, first)])
        if (isWithin(p, workdir) && entryExists(p)) out.push(p);
    }
  }
  return [...new Set(out)];
}

/** The module name an entry directly in an import root gives Python: `json.py`, `json/`, `json.cpython-311-x86_64-linux-gnu.so` are `json`. */
function moduleName(entry: string): string {
  return entry.split(".")[0]!;
}

/**
 * Whether a module, a link or a regular package of this name shadows one: `names`
 * (python-names.ts) holds it as a module or a namespace package, or none could be asked.
 */
const shadowsAsModule = (name: string, names: ReadonlySet<string> | null) =>
  names === null || names.has(name) || names.has(`ns:${name}`);
/** A folder without `__init__.py` is a namespace portion: it loses to any module or regular package, and joins only a namespace package. */
const shadowsAsNamespace = (name: string, names: ReadonlySet<string> | null) =>
  names === null || names.has(`ns:${name}`);

const isInit = (file: string) => moduleName(basename(file)) === "__init__" && PY_MODULE_FILE.test(file);

/** Whether `dir` holds a module directly (a `.py`, an extension, `__init__.py`). */
function holdsModule(dir: string): boolean {
  try {
    return readdirSync(dir).some((n) => PY_MODULE_FILE.test(n));
  } catch {
    return false;
  }
}

/** Entry point groups of a distribution that are programs to install, not plugins a tool loads. */
const SCRIPT_GROUPS = /^(console_scripts|gui_scripts)$/;

/** Whether a distribution's metadata folder declares plugins (`[pytest11]`, `[flake8.extension]`): what tools load from it. */
function declaresPlugins(metadataDir: string): boolean {
  const text = readRegularHead(join(metadataDir, "entry_points.txt"), 256 * 1024) ?? "";
  return [...text.matchAll(/^[ \t]*\[([^\]\n]+)\]/gm)].some((m) => !SCRIPT_GROUPS.test(m[1]!.trim()));
}

/**
 * Whether writing `abs` makes a module Python imports from an import root in place of one
 * of `names`: a module file directly in it, a folder's `__init__.py` (a regular package),
 * the first module of a folder that held none (a namespace portion), or the entry points
 * of a distribution's metadata there.
 */
export function addsPythonModule(abs: string, roots: readonly string[], names: ReadonlySet<string> | null): boolean {
  for (const root of roots) {
    if (abs === root || !isWithin(abs, root) || entryExists(abs)) continue;
    const first = relative(root, abs).split("/")[0]!;
    const top = join(root, first);
    if (PY_METADATA_DIR.test(first)) {
      if (basename(abs) === "entry_points.txt" && dirname(abs) === top) return true;
      continue;
    }
    if (!PY_MODULE_FILE.test(abs)) continue;
    if (top === abs) {
      if (shadowsAsModule(moduleName(first), names)) return true;
      continue;
    }
    if (dirname(abs) !== top) continue;
    if (isInit(abs) ? shadowsAsModule(first, names) : !holdsModule(top) && shadowsAsNamespace(first, names))
      return true;
  }
  return false;
}

/**
 * The entries a job added in an import root (workdir-relative roots, "" for the workdir
 * itself; `workdir` to read them) that Python imports in place of one of `names`: module
 * files, links, packages, the `__init__.py` or first module of a folder that was there,
 * and a distribution's metadata that declares plugins.
 */
export function newPythonModules(
  workdir: string,
  scans: { before: ReadonlyMap<string, unknown>; after: ReadonlyMap<string, { kind: string }> },
  roots: ReadonlySet<string>,
  names: ReadonlySet<string> | null,
): string[] {
  const { before, after } = scans;
  const out: string[] = [];
  for (const [r, e] of after) {
    if (before.has(r)) continue;
    const parent = dirOf(r);
    if (roots.has(parent)) {
      if (newEntryIsModule(workdir, r, e.kind, after, names)) out.push(r);
    } else if (parent !== "" && roots.has(dirOf(parent)) && before.has(parent)) {
      if (
        PY_METADATA_DIR.test(parent) ? declaresPlugins(join(workdir, parent)) : firstModuleOf(parent, r, before, names)
      )
        out.push(r);
    }
  }
  return out;
}

const dirOf = (r: string) => (r.includes("/") ? r.slice(0, r.lastIndexOf("/")) : "");

/** A new entry directly in a root: what it gives Python. */
function newEntryIsModule(
  workdir: string,
  r: string,
  kind: string,
  after: ReadonlyMap<string, { kind: string }>,
  names: ReadonlySet<string> | null,
): boolean {
  const name = r.slice(r.lastIndexOf("/") + 1);
  // A link is followed by Python to whatever it holds (entry points pytest loads): judged unread, as a plugin.
  if (PY_METADATA_DIR.test(name)) return kind === "link" || (kind === "dir" && declaresPlugins(join(workdir, r)));
  if (kind === "link") return shadowsAsModule(moduleName(name), names); // Python follows it, whatever it holds
  if (kind !== "dir") return PY_MODULE_FILE.test(name) && shadowsAsModule(moduleName(name), names);
  const inside = [...after.keys()].filter((k) => dirOf(k) === r);
  if (inside.some(isInit)) return shadowsAsModule(name, names);
  const holds = [...after.keys()].some((k) => k.startsWith(`${r}/`) && PY_MODULE_FILE.test(k));
  return holds && shadowsAsNamespace(name, names);
}

/** A new module file `r` directly in the folder `top` of a root that existed: its `__init__`, or its first module. */
function firstModuleOf(
  top: string,
  r: string,
  before: ReadonlyMap<string, unknown>,
  names: ReadonlySet<string> | null,
): boolean {
  if (!PY_MODULE_FILE.test(r)) return false;
  const name = top.slice(top.lastIndexOf("/") + 1);
  // An `__init__.py` makes the folder a regular package, which wins over the one installed.
  if (isInit(r)) return shadowsAsModule(name, names);
  const heldOne = [...before.keys()].some((k) => dirOf(k) === top && PY_MODULE_FILE.test(k));
  return !heldOne && shadowsAsNamespace(name, names);
}

/** Python's compiled modules: the import system runs one in place of its source when its header matches the source's mtime and size. */
const BYTECODE = /\.py[co]$/i;

/**
 * The compiled modules (`__pycache__/*.pyc`, a sourceless `x.pyc`) a job made or changed,
 * anywhere in the tree, ignored folders too: Python (and pytest's own cache of rewritten
 * tests) trusts a `.pyc` whose header matches its source's mtime and size, so a job that
 * forges one runs its code in place of a source no one changed. They are caches, so they
 * are removed after the job, never judged: the host compiles them again from the source.
 */
export function jobBytecode(
  before: ReadonlyMap<string, { id: string; sig: string }>,
  after: ReadonlyMap<string, { kind: string; id: string; sig: string }>,
): string[] {
  const out: string[] = [];
  for (const [r, e] of after) {
    if (e.kind === "dir" || !BYTECODE.test(r)) continue;
    const was = before.get(r);
    if (!was || was.id !== e.id || was.sig !== e.sig) out.push(r);
  }
  return out;
}
