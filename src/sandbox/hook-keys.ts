import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * package.json keys that hook managers read at commit (lint-staged, simple-git-hooks,
 * husky 4, yorkie's gitHooks, ghooks, pre-commit, commitlint): the file itself stays
 * writable (delegates add dependencies and scripts), so these keys are compared before
 * and after the job, and put back if they changed.
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
];
const MAX_BYTES = 4 << 20;

type Json = Record<string, unknown>;
export type HookKeys = Map<string, string | undefined>;

function parse(text: string): Json | null {
  try {
    if (text.length > MAX_BYTES) return null;
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null; // not JSON: no hook manager reads keys out of it either
  }
}

function read(path: string): Json | null {
  try {
    return parse(readFileSync(path, "utf8"));
  } catch {
    return null; // absent or unreadable
  }
}

/** The hook keys of one package.json, as JSON text (undefined: absent). */
function keysOf(pkg: Json | null): HookKeys {
  const config = pkg && typeof pkg.config === "object" && pkg.config !== null ? (pkg.config as Json) : {};
  const out: HookKeys = new Map();
  for (const k of HOOK_KEYS) out.set(k, pkg && k in pkg ? JSON.stringify(pkg[k]) : undefined);
  out.set("config.ghooks", "ghooks" in config ? JSON.stringify(config.ghooks) : undefined);
  return out;
}

export function readHookKeys(root: string, rel: string): HookKeys {
  return keysOf(read(join(root, rel)));
}

/** The hook keys that differ between a package.json's keys and the text it would become. */
export function changedHookKeys(before: HookKeys, text: string): string[] {
  const after = keysOf(parse(text));
  return [...before.keys()].filter((k) => before.get(k) !== after.get(k));
}

/**
 * Compares one package.json with its keys before the job; changed keys are put back
 * (removed if they were absent) and named. The rest of the delegate's edit stays.
 */
export function restoreHookKeys(root: string, rel: string, before: HookKeys): string[] {
  const path = join(root, rel);
  const pkg = read(path);
  const now = keysOf(pkg);
  const changed = [...before.keys()].filter((k) => before.get(k) !== now.get(k));
  if (changed.length === 0 || !pkg) return [];
  for (const k of changed) {
    if (k === "config.ghooks" && (typeof pkg.config !== "object" || pkg.config === null)) pkg.config = {};
    const target = k === "config.ghooks" ? (pkg.config as Json) : pkg;
    const key = k === "config.ghooks" ? "ghooks" : k;
    const was = before.get(k);
    if (was === undefined) delete target[key];
    else target[key] = JSON.parse(was);
  }
  const indent = /^[{\s]*\n([ \t]+)"/.exec(readFileSync(path, "utf8"))?.[1] ?? "  ";
  writeFileSync(path, `${JSON.stringify(pkg, null, indent)}\n`);
  return changed.map((k) => `${rel}#${k}`);
}
