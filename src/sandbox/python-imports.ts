import { lstatSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { entryExists } from "../sys/file-head.ts";
import { isWithin, resolveUserPath } from "../sys/paths.ts";

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
/** A file Python imports as a module, or that a site folder reads (`.pth`, `.egg-link`). */
const PY_MODULE_FILE = /\.(py|pyc|pyo|pyw|so|pyd|pth|egg-link)$/i;
/** An installed distribution's metadata: its entry points are plugins tools load. */
const PY_METADATA_DIR = /\.(dist-info|egg-info)$/i;

/**
 * Where the python commands among `tokens` (options kept) import from first: the folder
 * the host runs them in (`project`) for `-m`, `-c` and `-`, else the script's folder,
 * resolved from `bases`. Only folders inside `workdir`.
 */
export function pythonImportRoots(
  tokens: readonly string[],
  bases: readonly string[],
  project: string,
  o: { workdir: string; home?: string },
): string[] {
  const out = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    if (!PYTHON.test(basename(tokens[i]!))) continue;
    const script = scriptAfter(tokens, i + 1);
    if (script === null) out.add(project);
    else
      for (const base of bases) {
        const abs = resolveUserPath(script, base, o.home);
        if (isFile(abs)) out.add(dirname(abs));
      }
  }
  return [...out].filter((d) => isWithin(d, o.workdir));
}

/** The script word after python's options from `j`, or null when the code comes from `-m`, `-c` or standard input. */
function scriptAfter(tokens: readonly string[], j: number): string | null {
  for (; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (t === "-" || t === "--") return t === "-" ? null : (tokens[j + 1] ?? null);
    if (!t.startsWith("-")) return t;
    if (t.startsWith("--")) {
      if (t === "--check-hash-based-pycs") j++;
      continue;
    }
    // Short options combine (`-Bm mod`): m and c end them; W and X take an argument.
    for (const c of t.slice(1)) {
      if (c === "m" || c === "c") return null;
      if (c === "W" || c === "X") {
        if (t.endsWith(c)) j++;
        break;
      }
    }
  }
  return null;
}

function isFile(p: string): boolean {
  try {
    return lstatSync(p).isFile();
  } catch {
    return false;
  }
}

/** A Python source: its name says so, or its first line runs python (`#!/usr/bin/env python3`). */
export function isPythonSource(file: string, text: string): boolean {
  return /\.pyw?$/i.test(file) || /^#![^\n]*\bpython[\d.]*\b/.test(text);
}

/** `import a, b.c as d` and `from e.f import g`: the first names (`a`, `b`, `e`); `from .h import i`: `.h`. */
const IMPORT_LINE = /^[ \t]*(?:from[ \t]+(\.*[A-Za-z_][\w.]*|\.+)[ \t]+import\b|import[ \t]+([^\n#;]+))/gm;

/** The modules a Python source imports: absolute ones by their first name, relative ones (`.x`) as written. */
export function pythonImported(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT_LINE)) {
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

/**
 * Whether writing `abs` would add a module to an import root: the entry it makes directly
 * in the root is new, and it is a Python module, a folder that will hold one, or a
 * distribution's metadata.
 */
export function addsPythonModule(abs: string, roots: readonly string[]): boolean {
  for (const root of roots) {
    if (!isWithin(abs, root)) continue;
    const first = relative(root, abs).split("/")[0]!;
    if (entryExists(join(root, first))) continue;
    if (PY_MODULE_FILE.test(basename(abs)) || PY_METADATA_DIR.test(first)) return true;
  }
  return false;
}

/**
 * The entries a job added directly in an import root (workdir-relative roots, "" for the
 * workdir itself) that Python would import: module files, distribution metadata, and new
 * folders holding a module (a package, regular or namespace).
 */
export function newPythonModules(
  before: ReadonlyMap<string, unknown>,
  after: ReadonlyMap<string, { kind: string }>,
  roots: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const [r, e] of after) {
    if (before.has(r)) continue;
    const slash = r.lastIndexOf("/");
    const parent = slash < 0 ? "" : r.slice(0, slash);
    if (!roots.has(parent)) continue;
    const name = r.slice(slash + 1);
    const moduleLike =
      e.kind === "dir"
        ? PY_METADATA_DIR.test(name) || [...after.keys()].some((k) => k.startsWith(`${r}/`) && PY_MODULE_FILE.test(k))
        : PY_MODULE_FILE.test(name);
    if (moduleLike) out.push(r);
  }
  return out;
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
