import { relative } from "node:path";
import { z } from "zod";
import { describeError } from "../../errors.ts";
import { confinePath, displayPath } from "./confine.ts";
import { loadGitIgnoreMatcher } from "./gitignore.ts";
import { toSlash } from "./tree-walk.ts";
import type { ToolContext } from "./types.ts";

/** The `path` and `glob` arguments search_files and list_files share. */
export const scopePath = () =>
  z
    .string({ error: "path must be a string: a directory or file relative to the working directory" })
    .optional()
    .describe("Directory (or file) to look in, relative to the working directory (default: all of it)");

export const scopeGlob = () =>
  z
    .string({ error: "glob must be a string such as '*.ts' or 'src/**/*.test.ts'" })
    .max(1000)
    .optional()
    .describe("Only files matching this glob: by name ('*.ts', '*.{js,jsx}') or by path ('src/**/*.test.ts')");

export type Scope = { abs: string; shown: string; matches: (rel: string) => boolean };

/**
 * Where a walk starts (confined like every file tool) and which files it keeps. A glob
 * without a `/` matches the file name at any depth, as ripgrep's `-g` does; one with a
 * `/` matches the path relative to the workdir or to `path`.
 */
export async function walkScope(
  tool: string,
  given: string | undefined,
  glob: string | undefined,
  ctx: ToolContext,
): Promise<Scope | string> {
  let abs: string;
  try {
    abs = await confinePath(ctx.workdir, given?.trim() ? given : ".", ctx.allowEscape);
  } catch (e) {
    return `${tool}: ${describeError(e)}`;
  }
  const shown = displayPath(ctx.workdir, abs);
  await loadGitIgnoreMatcher();
  const pattern = glob?.trim();
  if (!pattern) return { abs, shown, matches: () => true };
  const g = new Bun.Glob(pattern);
  const rootRel = toSlash(relative(ctx.workdir, abs));
  if (!pattern.includes("/")) return { abs, shown, matches: (rel) => g.match(rel.slice(rel.lastIndexOf("/") + 1)) };
  const fromRoot = (rel: string) => (rootRel && rel.startsWith(`${rootRel}/`) ? rel.slice(rootRel.length + 1) : rel);
  return { abs, shown, matches: (rel) => g.match(rel) || g.match(fromRoot(rel)) };
}

/** Lets other work (MCP frames, timers) run during a long walk. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
