import { lstatSync, readlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isWithin } from "../sys/paths.ts";

/**
 * The programs a protected configuration runs by a name the host looks up, not by a path
 * of the tree: `npx lint-fix` and `npm exec`, `pnpm exec`, `yarn`, `bunx` (and the bare
 * first word of a package.json script a config runs, `eslint .`) run
 * `node_modules/.bin/<name>` of the project or a folder above it; `PATH_add bin` in an
 * `.envrc`, a `PATH=` in a config (VS Code's `terminal.integrated.env.*`, a mise `[env]`)
 * puts a folder of the tree before every command the shell runs. The configuration is
 * read-only, so what these resolve to must be too, or a delegate rewrites the program and
 * the host runs it all the same, though git ignores `node_modules`.
 *
 * Only the exact entries are named, not their folders, so a delegate may still
 * `npm install` other packages: the `.bin` link and every link and file of its chain
 * inside the work tree. A folder put on PATH is named whole: any new file in it shadows
 * a command (`bin/git`).
 */

/** Runners whose next word (options skipped) is a bin of node_modules. */
const BIN_RUNNER = /^(npx|bunx|pnpx)$/;
/** `<tool> exec|x|dlx <bin>`; yarn (v1 and berry) also runs a bin as `yarn <bin>`. */
const EXEC_VERB = /^(exec|x|dlx)$/;
/** Links followed at most, as the kernel does (ELOOP past 40; a real chain is short). */
const MAX_LINKS = 8;
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

/** Folders a config puts on PATH (`PATH_add bin`, `path_add PATH bin`, `PATH=./bin:$PATH`, `"PATH": "${workspaceFolder}/bin:…"`), as written. */
export function pathDirs(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\bPATH_add\s+([^\s;&|]+)/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bpath_add\s+\w+\s+([^\s;&|]+)/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bPATH["']?\s*[:=]\s*["']?([^"'\s;&|]+)/g)) out.push(...m[1]!.split(":"));
  // A leading $VAR/ or ${VAR}/ is the project dir a host sets: relative to it.
  return out.map((d) => d.replace(/^\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?\//, "./")).filter((d) => d && !/[${}]/.test(d));
}

/** The paths of the work tree `dirs` name, from `base`, whether they exist or not. */
export function pathFolders(dirs: string[], base: string, workdir: string): string[] {
  const out: string[] = [];
  for (const d of dirs) {
    const abs = isAbsolute(d) ? resolve(d) : resolve(base, d);
    // Absent too: named, so a folder the job makes there is found after it (not bound: nothing to bind).
    if (abs !== workdir && isWithin(abs, workdir)) out.push(abs);
  }
  return out;
}
