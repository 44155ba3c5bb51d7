import { basename, dirname } from "node:path";
import { isHookManagerKey, readHookKeys } from "./hook-keys.ts";

/**
 * What git hook managers run, read from their own configuration: lint-staged's tasks
 * (its config files in any of their formats) and the commands in package.json's
 * hook-manager keys. config-named.ts follows what these commands run, as it does a
 * protected config file's.
 */

/** Every value of a JSON document, the document itself first (at most 10,000); none when it is not JSON. */
export function jsonNodes(text: string): unknown[] {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return [];
  }
  const nodes: unknown[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0 && nodes.length < 10_000) {
    const v = stack.pop();
    nodes.push(v);
    if (typeof v === "object" && v !== null) stack.push(...Object.values(v));
  }
  return nodes;
}

/** Every string of a JSON document, a line each (lint-staged's tasks, whatever glob or list holds them). */
function jsonStrings(text: string): string {
  return jsonNodes(text)
    .filter((v): v is string => typeof v === "string")
    .join("\n");
}

/** lint-staged's config files (JSON, YAML, JS): each task is a command it runs with node_modules/.bin first on PATH. */
const LINT_STAGED = /^(\.lintstagedrc(\..*)?|lint-staged\.config\..*)$/i;

/**
 * A lint-staged config's tasks, a line each. JSON: every string, whatever glob or list
 * holds it. JS: every quoted string. YAML (or a name that leaves the format open): every
 * quoted string and every YAML value (`"*.js": eslint --fix`, `- prettier -w`), so a task
 * is never missed for how it is written; a line that is no task names no installed bin.
 */
export function lintStagedTasks(file: string, text: string): { json: boolean; lines: string } {
  if (jsonNodes(text).length > 0) return { json: true, lines: jsonStrings(text) };
  const quoted = [...text.matchAll(/(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g)].map((m) => m[2]!);
  if (/\.[cm]?[jt]s$/i.test(file)) return { json: false, lines: quoted.join("\n") };
  const values = text
    .split("\n")
    .map((l) => /^\s*(?:-\s+|[^\s#][^:#]*:\s+)([^\s#"'`][^#]*?)\s*(?:#.*)?$/.exec(l)?.[1] ?? "")
    .filter(Boolean);
  return { json: false, lines: [...quoted, ...values].join("\n") };
}

/** Whether `file` is a lint-staged config file (read by lintStagedTasks). */
export const isLintStagedConfig = (file: string) => LINT_STAGED.test(basename(file));

/**
 * A package.json's hook-manager keys (lint-staged, husky 4, simple-git-hooks, …: hook-keys.ts),
 * each as the commands it holds, a line each: the manager runs them at commit, with
 * node_modules/.bin first on PATH, so config-named.ts reads them as a protected
 * configuration's text.
 */
export function hookKeyCommands(pkg: string): string[] {
  return [...readHookKeys(dirname(pkg), basename(pkg))].flatMap(([key, v]) => {
    if (v === undefined || !isHookManagerKey(key)) return [];
    const text = jsonStrings(v);
    // The pre-commit package's value names npm scripts (`["lint", "test"]`, `"lint, test"`): it runs `npm run <name>`.
    const scripts = /^pre-?commit$/.test(key) ? text.split(/[\s,]+/).filter((w) => /^[\w:.-]+$/.test(w)) : [];
    return [[text, ...scripts.map((w) => `npm run ${w}`)].join("\n")];
  });
}

/**
 * The strings of a package.json's other tools' keys (hook-keys.ts), a line each: a path
 * among them (`"prettier": "./config.cjs"`, `"jest": {"setupFiles": ["./setup.js"]}`) names
 * a module the tool loads. Not commands: their first words are not run.
 */
export function toolKeyStrings(pkg: string): string {
  return [...readHookKeys(dirname(pkg), basename(pkg))]
    .flatMap(([key, v]) => (v === undefined || isHookManagerKey(key) ? [] : [jsonStrings(v)]))
    .join("\n");
}
