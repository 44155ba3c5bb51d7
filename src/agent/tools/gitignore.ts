import { closeSync, constants, type Dirent, fstatSync } from "node:fs";
import { join, relative } from "node:path";
import type { Ignore } from "ignore";
import { type Confinement, openConfined } from "./open-confined.ts";
import { readCapped } from "./read-capped.ts";

/** A `.gitignore` larger than this is not read (its rules are then not applied). */
const GITIGNORE_MAX_BYTES = 256 * 1024;

type Layer = { base: string; rules: Ignore };

let makeIgnore: typeof import("ignore") | undefined;

/**
 * Loads the matcher on the first walk, not with the agent's tools: a run that never
 * searches or lists never pays for parsing it.
 */
export async function loadGitIgnoreMatcher(): Promise<void> {
  makeIgnore ??= (await import("ignore")).default;
}
type DirRef = { fd: number; abs: string };

/**
 * The `.gitignore` rules in force in one directory of a walk: the workdir's own
 * `.git/info/exclude`, then every `.gitignore` from the workdir down, each matched
 * against the path relative to its own directory. A deeper file wins over a higher one,
 * as in git. The rules come from the matcher the `ignore` package gives (the one eslint
 * uses), case-sensitive like git on Linux.
 */
export class GitIgnores {
  private constructor(private readonly layers: readonly Layer[]) {}

  /**
   * The rules above `rootAbs`: `.git/info/exclude` and the `.gitignore` of each directory
   * from the workdir down to the root's parent (the root's own is read when it is walked).
   * A root the model named explicitly is searched even if those rules ignore it.
   */
  static forRoot(rootAbs: string, where: Confinement): GitIgnores {
    const layers: Layer[] = [];
    const exclude = readRules(join(where.workdir, ".git", "info", "exclude"), where);
    if (exclude) layers.push({ base: "", rules: exclude });
    const rel = relative(where.workdir, rootAbs);
    const parts = rel === "" ? [] : rel.split(/[\\/]/);
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join("/");
      const rules = readRules(join(where.workdir, ...parts.slice(0, i), ".gitignore"), where);
      if (rules) layers.push({ base, rules });
    }
    const above = new GitIgnores(layers);
    return rel !== "" && above.ignored(parts.join("/"), true) ? new GitIgnores([]) : above;
  }

  /** The rules inside `dir`: these plus its own `.gitignore`, when `entries` has one. */
  enter(dir: DirRef, entries: readonly Dirent[], where: Confinement): GitIgnores {
    if (!entries.some((e) => e.name === ".gitignore" && e.isFile())) return this;
    const rules = readRules(join(dir.abs, ".gitignore"), where);
    if (!rules) return this;
    const base = relative(where.workdir, dir.abs).split(/[\\/]/).filter(Boolean).join("/");
    return new GitIgnores([...this.layers, { base, rules }]);
  }

  /** Whether `rel` (relative to the workdir, `/`-separated) is ignored. */
  ignored(rel: string, isDir: boolean): boolean {
    let out = false;
    for (const { base, rules } of this.layers) {
      if (base !== "" && !rel.startsWith(`${base}/`)) continue;
      const sub = base === "" ? rel : rel.slice(base.length + 1);
      try {
        const r = rules.test(isDir ? `${sub}/` : sub);
        if (r.ignored) out = true;
        else if (r.unignored) out = false;
      } catch {
        // A name the matcher cannot take (such as "...") is simply not ignored.
      }
    }
    return out;
  }
}

/** The rules of one ignore file, or null when it is missing, not a file, too large or outside. */
function readRules(abs: string, where: Confinement): Ignore | null {
  const make = makeIgnore;
  if (!make) throw new Error("loadGitIgnoreMatcher() was not awaited before the walk");
  let opened: { fd: number } | undefined;
  try {
    opened = openConfined(abs, constants.O_RDONLY | constants.O_NONBLOCK, where);
    const st = fstatSync(opened.fd);
    if (!st.isFile()) return null;
    const buf = readCapped(opened.fd, GITIGNORE_MAX_BYTES, st.size);
    return buf ? make({ ignorecase: false }).add(buf.toString("utf8")) : null;
  } catch {
    return null;
  } finally {
    if (opened) closeSync(opened.fd);
  }
}
