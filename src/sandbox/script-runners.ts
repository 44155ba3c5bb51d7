import { basename } from "node:path";
import { namesAfterOptions } from "./pm-words.ts";

/**
 * Tools that run a package.json's scripts by name, beside the package managers themselves:
 * npm-run-all's `npm-run-all lint:*`, `run-s build test`, `run-p "watch:*"`, and
 * concurrently's `concurrently "npm:lint:*" "npm:test"`. Each name is run as `npm run
 * <name>` in the package.json nearest to where the tool runs (npm's pre/post ones with it),
 * and a glob (`lint:*`) runs every script it matches, one a job adds included
 * (hook-keys.ts holds such a key whole).
 */

const RUNNERS = /^(npm-run-all2?|run-s|run-p)$/;
/** npm-run-all's options that take a value. */
const VALUED = /^(--max-parallel|--npm-path)$/;
const NAME = /^[A-Za-z0-9*][\w:.*-]*$/;

/** The script names (globs kept) the script runners in `text` run. */
export function runnerScripts(text: string): string[] {
  const out: string[] = [];
  for (const command of text.split(/&&|\|\||[;|\n]/)) {
    const t = command.split(/\s+/).filter(Boolean).map(unquote);
    for (let i = 0; i < t.length; i++) {
      const tool = basename(t[i]!);
      if (RUNNERS.test(tool)) out.push(...namesAfter(t, i + 1));
      else if (tool === "concurrently")
        for (const w of t.slice(i + 1)) if (/^npm:/.test(w) && NAME.test(w.slice(4))) out.push(w.slice(4));
    }
  }
  return out.flatMap((n) => [n, `pre${n}`, `post${n}`]);
}

function namesAfter(t: readonly string[], from: number): string[] {
  return namesAfterOptions(t, from, { valued: VALUED, name: NAME });
}

const unquote = (w: string) => w.replace(/^["'`]+|["'`]+$/g, "");

/** Whether a script name is a glob, and whether `name` is one it matches (`*` taken across `:` too: more, never fewer). */
export const isScriptGlob = (name: string) => name.includes("*");
export function globMatches(glob: string, name: string): boolean {
  const re = new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*+/g, ".*")}$`);
  return re.test(name);
}
