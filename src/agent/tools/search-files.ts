import { closeSync, fstatSync } from "node:fs";
import type { RE2JS } from "re2js";
import { z } from "zod";
import { describeError, isDlError } from "../../errors.ts";
import { looksBinary, readCapped } from "./read-capped.ts";
import { SEARCH_DEFAULTS, type SearchSettings } from "./settings.ts";
import { type FileVisit, type WalkStats, walkFiles } from "./tree-walk.ts";
import { type AgentTool, defineTool, fail, ok, optionalInt } from "./types.ts";
import { scopeGlob, scopePath, walkScope, yieldToLoop } from "./walk-scope.ts";

const PATTERN_ERROR = "pattern must be a non-empty regular expression";

function searchInput(s: SearchSettings) {
  return z.object({
    pattern: z
      .string({ error: PATTERN_ERROR })
      .min(1, { error: PATTERN_ERROR })
      .max(2000)
      .describe("Regular expression, RE2 syntax (no lookaround or backreferences); (?i) makes it case-insensitive"),
    path: scopePath(),
    glob: scopeGlob(),
    max_results: optionalInt("max_results", 1).describe(
      `Matching lines to return (default ${s.defaultResults}, at most ${s.maxResults})`,
    ),
  });
}

/** What one search counted besides its matches, for the notes under them. */
type Tally = { files: number; binary: number; large: number; unreadable: number; bytes: number; cut?: string };

/**
 * A regular expression over the workdir's files. RE2 (the re2js port) and not RegExp: a
 * pattern comes from a model, and a backtracking engine lets `(a+)+$` run for hours on
 * one line, where RE2 is linear in the input. Everything is capped: matches, line
 * length, file size, bytes read, entries walked and time, each cut said in a note.
 */
export function searchFilesTool(s: SearchSettings = SEARCH_DEFAULTS): AgentTool {
  return defineTool({
    name: "search_files",
    description: `Search file contents with a regular expression; returns 'path:line: text' for each matching line (at most ${s.defaultResults} unless max_results says otherwise). Honours .gitignore and skips binary files; narrow with path (a directory or file) and glob ('*.ts').`,
    input: searchInput(s),
    async run({ pattern, path, glob, max_results }, ctx) {
      let re: RE2JS;
      try {
        // Loaded on the first search: ~250 KB of code a run without one never parses.
        const { RE2JS: engine } = await import("re2js");
        re = engine.compile(pattern, engine.MULTILINE);
      } catch (e) {
        return fail(
          `search_files: pattern is not a valid RE2 regular expression (${(e as Error).message}); lookaround and backreferences are not supported`,
        );
      }
      const scope = await walkScope("search_files", path, glob, ctx);
      if (typeof scope === "string") return fail(scope);
      const max = Math.min(max_results ?? s.defaultResults, s.maxResults);
      const tally: Tally = { files: 0, binary: 0, large: 0, unreadable: 0, bytes: 0 };
      const hits: string[] = [];
      try {
        await searchTree(scope, re, { ...ctx, max, s, tally, hits });
      } catch (e) {
        if (isDlError(e, "path_escape")) return fail(`search_files: ${e.message}`);
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return fail(`search_files: ${scope.shown} does not exist`);
        return fail(`search_files: cannot search ${scope.shown} (${describeError(e)})`);
      }
      return ok(report(hits, tally, pattern, scope.shown, max, s));
    },
  });
}

type SearchRun = {
  workdir: string;
  allowEscape: boolean;
  signal: AbortSignal;
  max: number;
  s: SearchSettings;
  tally: Tally;
  hits: string[];
};

async function searchTree(scope: { abs: string; matches: (rel: string) => boolean }, re: RE2JS, run: SearchRun) {
  const { s, tally } = run;
  const walk = walkFiles(scope.abs, run, { maxEntries: s.maxEntries, deadline: performance.now() + s.timeMs });
  let lastYield = performance.now();
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) {
      tally.cut ??= walkCut(step.value);
      return;
    }
    if (!scope.matches(step.value.rel)) continue;
    searchFile(step.value, re, run);
    if (run.hits.length >= run.max) tally.cut ??= `the first ${run.max} matching lines are shown`;
    else if (tally.bytes > s.maxScanBytes) tally.cut ??= `it read its ${mb(s.maxScanBytes)} budget`;
    if (tally.cut || run.signal.aborted) {
      walk.return(undefined as never);
      return;
    }
    if (performance.now() - lastYield > 20) {
      await yieldToLoop();
      lastYield = performance.now();
    }
  }
}

function walkCut(stats: WalkStats): string | undefined {
  if (stats.cut === "entries") return "it looked at the most directory entries one call may";
  if (stats.cut === "time") return "it ran out of time";
  return undefined;
}

/** One file's matching lines into run.hits; a file it cannot or should not read is counted. */
function searchFile(file: FileVisit, re: RE2JS, run: SearchRun): void {
  const { tally, s } = run;
  let fd: number;
  try {
    fd = file.open();
  } catch {
    tally.unreadable++;
    return;
  }
  let buf: Buffer | null;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return;
    buf = st.size > s.maxFileBytes ? null : readCapped(fd, s.maxFileBytes, st.size);
  } catch {
    tally.unreadable++;
    return;
  } finally {
    closeSync(fd);
  }
  tally.files++;
  if (buf === null) return void tally.large++;
  tally.bytes += buf.byteLength;
  if (looksBinary(buf)) return void tally.binary++;
  matchLines(buf.toString("utf8"), file.rel, re, run);
}

/** Each line where a match starts, once, as `path:line: text`. */
function matchLines(text: string, rel: string, re: RE2JS, run: SearchRun): void {
  const m = re.matcher(text);
  let line = 1;
  let lineStart = 0;
  let from = 0;
  while (run.hits.length < run.max && from < text.length && m.find(from)) {
    const at = m.start();
    for (let nl = text.indexOf("\n", lineStart); nl !== -1 && nl < at; nl = text.indexOf("\n", lineStart)) {
      line++;
      lineStart = nl + 1;
    }
    let end = text.indexOf("\n", at);
    if (end === -1) end = text.length;
    run.hits.push(`${rel}:${line}: ${shownLine(text.slice(lineStart, end), at - lineStart, run.s.maxLineChars)}`);
    from = end + 1;
  }
}

/** The line, or a window of it around the match when it is too long (minified code). */
function shownLine(raw: string, col: number, max: number): string {
  const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  if (text.length <= max) return text;
  const start = Math.max(0, Math.min(col - Math.floor(max / 4), text.length - max));
  const head = start > 0 ? "…" : "";
  const tail = start + max < text.length ? "…" : "";
  return `${head}${text.slice(start, start + max)}${tail} [line of ${text.length} chars cut]`;
}

function report(hits: string[], t: Tally, pattern: string, shown: string, max: number, s: SearchSettings): string {
  const notes: string[] = [];
  if (t.cut) {
    const more = max < s.maxResults ? `, or raise max_results (at most ${s.maxResults})` : "";
    notes.push(`[search cut: ${t.cut}; narrow the pattern, path or glob${more}]`);
  }
  const skipped = [
    t.binary ? `${t.binary} binary` : "",
    t.large ? `${t.large} over ${mb(s.maxFileBytes)}` : "",
    t.unreadable ? `${t.unreadable} unreadable` : "",
  ].filter(Boolean);
  if (skipped.length) notes.push(`[files skipped: ${skipped.join(", ")}]`);
  if (hits.length === 0) {
    return [`no line matches ${JSON.stringify(pattern)} in ${t.files} files under ${shown}`, ...notes].join("\n");
  }
  return [...hits, ...notes].join("\n");
}

function mb(n: number): string {
  return `${Math.round(n / (1024 * 1024))} MB`;
}
