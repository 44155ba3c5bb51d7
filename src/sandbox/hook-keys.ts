import { lstatSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { globMatches, isScriptGlob } from "./script-runners.ts";
import { writeBack } from "./write-back.ts";

/**
 * package.json keys that hook managers read at commit (lint-staged, simple-git-hooks,
 * husky 4, yorkie's gitHooks, ghooks, pre-commit, commitlint), every other tool's key
 * (PACKAGE_FIELDS), and the scripts a protected configuration runs (`npm run lint` in a
 * husky hook or a Claude Code hook: `scripts.lint`, config-named.ts): the file itself
 * stays writable (delegates add dependencies and scripts), so these keys are compared
 * before and after the job, and put back if they changed (a key the job added: removed).
 */
const HOOK_KEYS = [
  "lint-staged",
  "simple-git-hooks",
  "husky",
  "gitHooks",
  "ghooks",
  "pre-commit",
  "precommit",
  "commitlint",
  "config.ghooks",
];
const MAX_BYTES = 4 << 20;

/**
 * package.json's own fields: what npm, node and the package managers read to describe,
 * build and install the package. A delegate edits these (a dependency, a script, an
 * export). Every other top-level key is some tool's configuration, read by that tool
 * whenever it runs, from a hook or from the editor's extension (cosmiconfig's
 * `packageProp`: `prettier`, `eslintConfig`, `stylelint`, `babel`, `jest`, `nano-staged`),
 * and often naming a module it loads (`"prettier": "./config.cjs"`): those keys are kept as
 * the hook keys are. `packageManager` (which package manager corepack downloads and runs)
 * and package managers' own settings keys (`pnpm`) are among them, and so is `config`
 * (npm hands it to scripts, and commitizen's `config.commitizen.path` is a module it loads).
 */
const PACKAGE_FIELDS = new Set([
  "$schema",
  "name",
  "version",
  "description",
  "keywords",
  "homepage",
  "bugs",
  "license",
  "licenses",
  "author",
  "contributors",
  "maintainers",
  "funding",
  "files",
  "main",
  "module",
  "browser",
  "types",
  "typings",
  "type",
  "exports",
  "imports",
  "sideEffects",
  "bin",
  "man",
  "directories",
  "repository",
  "scripts",
  "dependencies",
  "devDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "optionalDependencies",
  "bundleDependencies",
  "bundledDependencies",
  "overrides",
  "resolutions",
  "engines",
  "os",
  "cpu",
  "libc",
  "private",
  "publishConfig",
  "workspaces",
]);

/** Whether `key` is a hook manager's (its value holds the commands the manager runs), not another tool's. */
export const isHookManagerKey = (key: string) => HOOK_KEYS.includes(key);

/** The top-level keys of `pkg` that are some tool's configuration (PACKAGE_FIELDS). */
function toolKeys(pkg: Json | null): string[] {
  return pkg ? Object.keys(pkg).filter((k) => !PACKAGE_FIELDS.has(k) && !HOOK_KEYS.includes(k)) : [];
}

type Json = Record<string, unknown>;
export type HookKeys = Map<string, string | undefined>;

/** A package.json's text as npm and node read it (a byte-order mark is nothing), or null when it is no JSON object. */
export function parseManifest(text: string): Json | null {
  try {
    if (text.length > MAX_BYTES) return null;
    // npm and node read a package.json with a byte-order mark as without one.
    const v: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null; // not JSON: no hook manager reads keys out of it either
  }
}

/** Whether the file reads as a package.json object (what npm would read keys from). */
export const readsAsManifest = (path: string) => read(path) !== null;

function read(path: string): Json | null {
  try {
    return parseManifest(readFileSync(path, "utf8"));
  } catch {
    return null; // absent or unreadable
  }
}

/** Where a key lives: `config.ghooks` and `scripts.<name>` (a name may hold dots) one level down. */
function pathOf(key: string): [string] | [string, string] {
  if (key.startsWith("scripts.")) return ["scripts", key.slice("scripts.".length)];
  return key === "config.ghooks" ? ["config", "ghooks"] : [key];
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function valueAt(pkg: Json | null, key: string): string | undefined {
  const [a, b] = pathOf(key);
  const outer = pkg?.[a];
  if (b !== undefined && isScriptGlob(b)) return globValue(outer, b);
  const v = b === undefined ? outer : isObject(outer) ? outer[b] : undefined;
  return v === undefined ? undefined : JSON.stringify(v);
}

/** The scripts a glob (`scripts.lint:*`, npm-run-all's) matches, as one JSON object in name order; undefined when none. */
function globValue(scripts: unknown, glob: string): string | undefined {
  if (!isObject(scripts)) return undefined;
  const matched = Object.keys(scripts)
    .filter((k) => globMatches(glob, k))
    .sort();
  return matched.length === 0 ? undefined : JSON.stringify(Object.fromEntries(matched.map((k) => [k, scripts[k]])));
}

/** The hook keys, the tools' keys and `extra` keys (such as `scripts.lint`) of one package.json, as JSON text (undefined: absent). */
function keysOf(pkg: Json | null, extra: readonly string[]): HookKeys {
  return new Map([...HOOK_KEYS, ...toolKeys(pkg), ...extra].map((k) => [k, valueAt(pkg, k)]));
}

/** The keys whose value differs between two reads of one package.json: a key either side has counts. */
function changedKeys(before: HookKeys, after: HookKeys): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k));
}

export function readHookKeys(root: string, rel: string, extra: readonly string[] = []): HookKeys {
  return keysOf(read(join(root, rel)), extra);
}

/** The hook keys that differ between a package.json's keys and the text it would become. */
export function changedHookKeys(before: HookKeys, text: string): string[] {
  return changedKeys(before, keysOf(parseManifest(text), [...before.keys()]));
}

function putBack(pkg: Json, key: string, was: string | undefined): void {
  const [a, b] = pathOf(key);
  if (b === undefined) {
    if (was === undefined) delete pkg[a];
    else pkg[a] = JSON.parse(was);
    return;
  }
  if (!isObject(pkg[a])) pkg[a] = {};
  const inner = pkg[a] as Json;
  if (isScriptGlob(b)) {
    // Every script the glob matches goes back to what it was: one the job added goes.
    for (const k of Object.keys(inner)) if (globMatches(b, k)) delete inner[k];
    Object.assign(inner, was === undefined ? {} : JSON.parse(was));
    return;
  }
  if (was === undefined) delete inner[b];
  else inner[b] = JSON.parse(was);
}

/**
 * Compares one package.json with its keys before the job; changed keys are put back
 * (removed if they were absent) and named. The rest of the delegate's edit stays. The
 * file keeps `mode`, its mode before the job (one the job made keeps the mode it has).
 */
export function restoreHookKeys(root: string, rel: string, before: HookKeys, mode?: number): string[] {
  const path = join(root, rel);
  const pkg = read(path);
  const changed = changedKeys(before, keysOf(pkg, [...before.keys()]));
  if (changed.length === 0 || !pkg) return [];
  for (const k of changed) putBack(pkg, k, before.get(k));
  const indent = /^[{\s]*\n([ \t]+)"/.exec(readFileSync(path, "utf8"))?.[1] ?? "  ";
  // A new file in its place, never a write through another name of the job's file (a hard link).
  const keep = mode ?? lstatSync(path).mode & 0o777;
  rmSync(path, { force: true });
  writeBack(path, `${JSON.stringify(pkg, null, indent)}\n`, keep);
  return changed.map((k) => `${rel}#${k}`);
}
