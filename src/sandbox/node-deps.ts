import { realpathSync } from "node:fs";
import { builtinModules } from "node:module";
import { basename, dirname, join } from "node:path";
import { entryExists, readRegularHead } from "../sys/file-head.ts";
import { isWithin } from "../sys/paths.ts";
import { parseManifest } from "./hook-keys.ts";

/**
 * The packages an installed package runs besides its own files. A protected configuration
 * that runs lint-staged runs `commander` and `yaml` as surely as lint-staged's own `lib/`:
 * node loads whatever `require("yaml")` finds, so rewriting that package is the same way
 * in as rewriting lint-staged. What node loads is read from the package itself: the names
 * its package.json depends on (DEPENDENCY_FIELDS),
 * each looked up as node looks it up from inside the package (`node_modules/<name>` of the
 * package's real folder and of each folder above it, skipping folders that are themselves
 * `node_modules`; the first one there wins), and theirs in turn. Every place node looks
 * before the one it finds is named too, absent: a job that makes a nearer
 * `node_modules/yaml` is what would run. pnpm's links are followed to the folders they
 * name, as node follows them. Past MAX_PACKAGES packages, the `node_modules` folders that
 * hold them are named whole instead.
 */

/** Packages followed from one root; a large tool (eslint with its plugins) has a few hundred. */
const MAX_PACKAGES = 1000;
const MAX_MANIFEST = 256 * 1024;
/** A package name npm accepts (`yaml`, `@scope/pkg`): a manifest's key that is no such name names no folder. */
const PACKAGE_NAME = /^(@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/i;
/** peerDependenciesMeta too: a package loads an optional peer when it is there (debug's supports-color). */
const DEPENDENCY_FIELDS = ["dependencies", "optionalDependencies", "peerDependencies", "peerDependenciesMeta"] as const;

/** Every package folder (and place node looks first) that the package at `root` loads, inside the work tree; `root` itself excluded. */
export function dependencyClosure(root: string, workdir: string): string[] {
  const out = new Set<string>();
  const done = new Set<string>();
  const queue = [root];
  while (queue.length > 0) {
    if (done.size >= MAX_PACKAGES) return [...out, ...holdingFolders(done, workdir)];
    const real = realInside(queue.shift()!, workdir);
    if (!real || done.has(real)) continue;
    done.add(real);
    out.add(real);
    for (const name of dependenciesOf(real))
      for (const p of lookups(name, real, workdir)) {
        out.add(p);
        if (entryExists(p)) queue.push(p);
      }
  }
  out.delete(root);
  return [...out];
}

/** The folder `p` resolves to, when it is inside the work tree (node runs the real file; one outside is not the job's to write). */
function realInside(p: string, workdir: string): string | null {
  try {
    const real = realpathSync(p);
    return isWithin(real, workdir) ? real : null;
  } catch {
    return null;
  }
}

/** The package names `dir`'s package.json depends on at run time. */
function dependenciesOf(dir: string): string[] {
  const text = readRegularHead(join(dir, "package.json"), MAX_MANIFEST);
  if (text === null) return [];
  const manifest = parseManifest(text);
  if (!manifest) return []; // node cannot read it either: it loads nothing by it
  const names = new Set<string>();
  for (const field of DEPENDENCY_FIELDS) {
    const deps = manifest[field];
    if (typeof deps === "object" && deps !== null)
      for (const n of Object.keys(deps)) if (PACKAGE_NAME.test(n)) names.add(n);
  }
  return [...names];
}

/**
 * Where node looks for `name` required from inside `from`, nearest first, up to the first
 * folder that is there (inside the work tree). At each level `require` tries the files
 * `<name>.js`, `.json` and `.node` before the folder of a package without `exports`, so
 * those are places too.
 */
function lookups(name: string, from: string, workdir: string): string[] {
  const out: string[] = [];
  for (let d = from; isWithin(d, workdir); d = dirname(d)) {
    if (basename(d) !== "node_modules") {
      const p = join(d, "node_modules", name);
      out.push(...SHADOW_EXTS.map((ext) => p + ext), p);
      if (entryExists(p)) break;
    }
    if (d === workdir) break;
  }
  return out;
}
const SHADOW_EXTS = [".js", ".json", ".node"];

/**
 * The `node_modules` folders holding `packages`, the outermost one above each: pnpm keeps a
 * package's real folder in `node_modules/.pnpm/<pkg>@<v>/node_modules`, so the nearest one
 * would leave the packages still queued writable.
 */
function holdingFolders(packages: Iterable<string>, workdir: string): string[] {
  const out = new Set<string>();
  for (const p of packages) {
    let outermost: string | null = null;
    for (let d = dirname(p); d !== workdir && isWithin(d, workdir); d = dirname(d))
      if (basename(d) === "node_modules") outermost = d;
    if (outermost) out.add(outermost);
  }
  return [...out];
}

/** A JavaScript or TypeScript module, by its name. */
const JS_FILE = /\.(c|m)?(j|t)sx?$/i;
/** `import … from "x"`, `export … from "x"`, `import "x"`, `import("x")`, `require("x")`, `require.resolve("x")`. */
const SPECIFIER =
  /\b(?:from\s*|import\s*\(?\s*|require(?:\.resolve)?\s*\(\s*)["'`]((?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*)(\/[^"'`]*)?["'`]/gi;
/** The package a whole specifier names (`@scope/x` of `@scope/x/lib`). */
const SPECIFIER_PACKAGE = /^(?:@[^/]+\/)?[^/]+/;

/** Node's own modules: `fs`, `node:path`; never looked up in node_modules. */
const BUILTIN = new Set(builtinModules);

/** The installed packages a JavaScript file (`file`, its text) loads by name, or a node script (its `#!` line). */
export function packagesImported(file: string, text: string): string[] {
  return [...new Set(specifiersImported(file, text).map((s) => SPECIFIER_PACKAGE.exec(s)![0]))];
}

/** The whole bare specifiers a JavaScript source loads (`src/store` of `require("src/store")`): NODE_PATH's folders are searched for them. */
export function specifiersImported(file: string, text: string): string[] {
  if (!JS_FILE.test(file) && !/^#!.*\b(node|bun|deno|tsx)\b/.test(text)) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(SPECIFIER)) if (!BUILTIN.has(m[1]!)) out.add(m[1]! + (m[2] ?? ""));
  return [...out];
}

/**
 * Where node finds the package `name` required from a file of `dir`: every place it looks,
 * up to the one that is there, when one is; nothing when none is (a project that has not
 * installed it yet: installing it is a delegate's ordinary `npm install`).
 */
export function installedPackage(name: string, dir: string, workdir: string): string[] {
  const places = lookups(name, dir, workdir);
  const last = places.at(-1);
  return last && entryExists(last) ? places : [];
}

/** The prefixes tools put before a plugin's or preset's short name (`react`: `eslint-plugin-react`). */
const PLUGIN_PREFIXES = [
  "eslint-plugin-",
  "eslint-config-",
  "prettier-plugin-",
  "stylelint-",
  "babel-plugin-",
  "babel-preset-",
  "@babel/plugin-",
  "@babel/preset-",
];
/** The same inside a scope (`@babel/env`: `@babel/preset-env`, `@acme/x`: `@acme/eslint-plugin-x`). */
const SCOPED_PREFIXES = ["eslint-plugin-", "eslint-config-", "prettier-plugin-", "preset-", "plugin-", "babel-preset-"];
/** Strings of one configuration looked at, at most (a config of thousands of strings names its plugins early). */
const MAX_STRINGS = 2000;

/**
 * The packages a tool's configuration may name by a string, as the tool resolves it: the
 * string itself (`"prettier-plugin-x"`, `"@acme/eslint-config"`), ESLint's
 * `plugin:react/recommended` and `@scope` forms, and the short names tools complete with
 * their prefix (`react`, `@babel/env`). Only those installed are named (installedPackage).
 */
export function namedPlugins(strings: readonly string[]): string[] {
  const out = new Set<string>();
  for (const raw of strings.slice(0, MAX_STRINGS)) {
    const s = raw.trim().replace(/^plugin:/, "");
    // A bare scope: ESLint's `@acme` is `@acme/eslint-plugin` (or `-config`).
    if (/^@[a-z0-9~-][a-z0-9._~-]*$/i.test(s)) for (const p of ["eslint-plugin", "eslint-config"]) out.add(`${s}/${p}`);
    const name = /^(@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*/i.exec(s)?.[0];
    if (!name || name.length > 214 || !PACKAGE_NAME.test(name)) continue;
    out.add(name);
    const scope = /^(@[^/]+)\/(.+)$/.exec(name);
    if (scope) for (const p of SCOPED_PREFIXES) out.add(`${scope[1]}/${p}${scope[2]}`);
    else for (const p of PLUGIN_PREFIXES) out.add(`${p}${name}`);
  }
  return [...out];
}

/** `import … from "#x"`, `require("#x")`: a subpath import, mapped by the nearest package.json's `imports`. */
const SUBPATH_SPECIFIER = /\b(?:from\s*|import\s*\(?\s*|require(?:\.resolve)?\s*\(\s*)["'`](#[^"'`\s]+)["'`]/g;

/** The subpath imports (`#lint/rules`) a JavaScript file loads. */
export function subpathImports(file: string, text: string): string[] {
  if (!JS_FILE.test(file) && !/^#!.*\b(node|bun|deno|tsx)\b/.test(text)) return [];
  return [...new Set([...text.matchAll(SUBPATH_SPECIFIER)].map((m) => m[1]!))];
}

/** What a package.json's `imports` maps `spec` to: the package.json that decides, the files of the tree it names, and the places a nearer package.json would decide instead. */
export interface MappedImport {
  pkg: string;
  targets: string[];
  nearer: string[];
}

/**
 * Where node resolves the subpath import `spec` from a file of `dir`: the nearest
 * package.json above it (inside the work tree) decides, through its `imports` map (an
 * exact key, or a pattern with one `*`); every relative target of every condition counts,
 * so whichever condition the tool runs under, its file is named. Null when no package.json
 * is there at all.
 */
export function mappedImport(spec: string, dir: string, workdir: string): MappedImport | null {
  const nearer: string[] = [];
  for (let d = dir; isWithin(d, workdir); d = dirname(d)) {
    const pkg = join(d, "package.json");
    const text = readRegularHead(pkg, MAX_MANIFEST);
    if (text === null) {
      nearer.push(pkg);
      if (d === workdir) break;
      continue;
    }
    const imports = importsOf(text);
    const value = imports ? matchImport(imports, spec) : undefined;
    const targets = stringLeaves(value?.target)
      .map((t) => t.replaceAll("*", value?.star ?? ""))
      .filter((t) => t.startsWith("./"))
      .map((t) => join(d, t))
      .filter((t) => isWithin(t, workdir));
    return { pkg, targets, nearer };
  }
  return null;
}

function importsOf(text: string): Record<string, unknown> | null {
  const imports = parseManifest(text)?.imports;
  return typeof imports === "object" && imports !== null ? (imports as Record<string, unknown>) : null;
}

/** The `imports` entry `spec` matches: its own key, else the pattern key (`#x/*`) with the longest prefix. */
function matchImport(imports: Record<string, unknown>, spec: string): { target: unknown; star: string } | undefined {
  if (Object.hasOwn(imports, spec)) return { target: imports[spec], star: "" };
  const patterns = Object.keys(imports)
    .filter((k) => k.split("*").length === 2)
    .filter((k) => {
      const [pre, post] = k.split("*") as [string, string];
      return spec.startsWith(pre) && spec.endsWith(post) && spec.length >= pre.length + post.length;
    })
    .sort((a, b) => b.indexOf("*") - a.indexOf("*"));
  const k = patterns[0];
  if (k === undefined) return undefined;
  const [pre, post] = k.split("*") as [string, string];
  return { target: imports[k], star: spec.slice(pre.length, spec.length - post.length) };
}

/** Every string of a conditions value (a string, an array, nested condition objects). */
function stringLeaves(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.flatMap(stringLeaves);
  if (typeof v === "object" && v !== null) return Object.values(v).flatMap(stringLeaves);
  return [];
}

/** A TypeScript source: bun, tsx, and esbuild (vite's config loader) resolve its bare imports through tsconfig.json's `paths`. */
const TS_FILE = /\.(c|m)?tsx?$/i;
const TS_CONFIGS = ["tsconfig.json", "jsconfig.json"];

/**
 * The configs that decide where `file`'s bare imports go (`paths`, `baseUrl`, `extends`):
 * those of the nearest folder, up to the work tree's root, that holds a tsconfig.json or a
 * jsconfig.json; and every place on the way there where a new one would decide instead.
 */
export function tsconfigsOf(file: string, workdir: string): { present: string[]; absent: string[] } {
  const absent: string[] = [];
  if (!TS_FILE.test(file) || file.includes("/node_modules/")) return { present: [], absent };
  for (let d = dirname(file); isWithin(d, workdir); d = dirname(d)) {
    const here = TS_CONFIGS.map((n) => join(d, n));
    const present = here.filter((p) => entryExists(p));
    // Both names count where one is: bun takes a tsconfig.json made beside a jsconfig.json.
    absent.push(...here.filter((p) => !present.includes(p)));
    if (present.length > 0) return { present, absent };
    if (d === workdir) break;
  }
  return { present: [], absent };
}
