import { z } from "zod";
import { describeError, isDlError } from "../../errors.ts";
import { SEARCH_DEFAULTS, type SearchSettings } from "./settings.ts";
import { walkFiles } from "./tree-walk.ts";
import { type AgentTool, defineTool, fail, ok } from "./types.ts";
import { type Scope, scopeGlob, scopePath, walkScope, yieldToLoop } from "./walk-scope.ts";

const listInput = z.object({ glob: scopeGlob(), path: scopePath() });

/** The files under the workdir (or `path`) that match a glob, sorted, capped, `.gitignore` honoured. */
export function listFilesTool(s: SearchSettings = SEARCH_DEFAULTS): AgentTool {
  return defineTool({
    name: "list_files",
    description: `List the files under the working directory (or path) that match a glob ('**/*.ts', '*.md'), one path per line, sorted; at most ${s.maxListed}. Honours .gitignore; symlinks are not followed.`,
    input: listInput,
    async run({ glob, path }, ctx) {
      const scope = await walkScope("list_files", path, glob, ctx);
      if (typeof scope === "string") return fail(scope);
      try {
        return ok(await listTree(scope, { ...ctx, s }));
      } catch (e) {
        if (isDlError(e, "path_escape")) return fail(`list_files: ${e.message}`);
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return fail(`list_files: ${scope.shown} does not exist`);
        return fail(`list_files: cannot list ${scope.shown} (${describeError(e)})`);
      }
    },
  });
}

async function listTree(
  scope: Scope,
  run: { workdir: string; allowEscape: boolean; signal: AbortSignal; s: SearchSettings },
): Promise<string> {
  const { s } = run;
  const walk = walkFiles(scope.abs, run, { maxEntries: s.maxEntries, deadline: performance.now() + s.timeMs });
  const listed: string[] = [];
  let cut: string | undefined;
  let lastYield = performance.now();
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) {
      if (step.value.cut)
        cut = step.value.cut === "time" ? "it ran out of time" : "it looked at the most entries one call may";
      break;
    }
    if (!scope.matches(step.value.rel)) continue;
    if (listed.length === s.maxListed || run.signal.aborted) {
      cut = `only the first ${s.maxListed} files are shown`;
      walk.return(undefined as never);
      break;
    }
    listed.push(step.value.rel);
    if (performance.now() - lastYield > 20) {
      await yieldToLoop();
      lastYield = performance.now();
    }
  }
  const note = cut ? `\n[list cut: ${cut}; narrow the glob or path]` : "";
  if (listed.length === 0) return `no files match under ${scope.shown}${note}`;
  return `${listed.join("\n")}${note}`;
}
