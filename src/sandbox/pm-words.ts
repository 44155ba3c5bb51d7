/**
 * Reading a package manager's command line for the scripts it runs, one owner for the
 * one-folder reader (config-named.ts npmScriptsRun) and the workspace-wide one
 * (workspace-runs.ts).
 */

/** npm's names for run-script (and what the other managers accept). */
export const RUN_ALIASES = /^(run|run-script|rum|urn)$/;
const NAME = /^[A-Za-z0-9][\w:.-]*$/;

/**
 * The words from `t[from]` that could be the script a command runs: options skipped, a
 * `run` alias skipped, and a word right after an option with no `=` taken both as that
 * option's value and, should it be none, as the script (npm's config options take a value
 * unless they are boolean: `npm run --loglevel silent lint`). More names, never fewer.
 */
export function scriptWords(t: readonly string[], from: number): string[] {
  const out: string[] = [];
  let maybeValue = false;
  for (let j = from; j < t.length; j++) {
    const w = t[j]!;
    if (w.startsWith("-")) {
      if (w === "--") break;
      maybeValue = !w.includes("=");
      continue;
    }
    if (!NAME.test(w)) {
      if (maybeValue) {
        maybeValue = false; // an option's value (`--prefix packages/a`)
        continue;
      }
      break;
    }
    if (RUN_ALIASES.test(w) && !maybeValue) continue;
    out.push(w);
    if (!maybeValue) break;
    maybeValue = false;
  }
  return out;
}

/**
 * The words from `t[from]` a runner takes as names (`turbo run lint test`, `run-s a b`):
 * options skipped (with their value, for those `valued` knows), `skip` words before the
 * first name skipped (`run`), up to the first word that is no name.
 */
export function namesAfterOptions(
  t: readonly string[],
  from: number,
  o: { valued: RegExp; name: RegExp; skip?: readonly string[] },
): string[] {
  const out: string[] = [];
  for (let j = from; j < t.length; j++) {
    const w = t[j]!;
    if (w.startsWith("-")) {
      if (o.valued.test(w)) j++;
      continue;
    }
    if (out.length === 0 && o.skip?.includes(w)) continue;
    if (!o.name.test(w)) break;
    out.push(w);
  }
  return out;
}

/**
 * The lifecycle scripts a package manager's own command runs without naming them
 * (npm's docs, "npm-scripts": Life Cycle Operation Order): an install in a post-merge
 * hook runs `postinstall`, `npm it` runs the install's and then `test`.
 */
const INSTALL = ["preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare", "postprepare"];
const LIFECYCLE: Record<string, string[]> = {
  install: INSTALL,
  i: INSTALL,
  add: INSTALL,
  ci: INSTALL,
  "clean-install": INSTALL,
  it: [...INSTALL, "pretest", "test", "posttest"],
  cit: [...INSTALL, "pretest", "test", "posttest"],
  "install-test": [...INSTALL, "pretest", "test", "posttest"],
  "install-ci-test": [...INSTALL, "pretest", "test", "posttest"],
  pack: ["prepack", "prepare", "postpack"],
  publish: ["prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"],
  version: ["preversion", "version", "postversion"],
  restart: ["prerestart", "restart", "postrestart", "prestop", "stop", "poststop", "prestart", "start", "poststart"],
  rebuild: ["preinstall", "install", "postinstall", "prepare"],
};

/** The scripts a manager's built-in command runs on its own, or none. A bare `yarn` installs. */
export function lifecycleOf(builtin: string | undefined): string[] {
  return LIFECYCLE[builtin ?? "install"] ?? [];
}
