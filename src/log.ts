// The basic reporter: the fancy one pulls ~4 MB of box-drawing and colour code into every start.
import { type ConsolaInstance, type ConsolaReporter, createConsola, LogLevels } from "consola/basic";

/**
 * The only logger. It writes to stderr because stdout of `dl serve` carries MCP frames
 * and stdout of other commands carries data.
 */
export const log = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  level: LogLevels.info,
  formatOptions: { date: false, colors: false, compact: true },
});

export type LogLevelName = "silent" | "error" | "warn" | "info" | "debug";

/** consola copies its options into a tagged child, so the level is set on each of them too. */
const tagged = new Set<ConsolaInstance>();

/** A logger whose lines carry `[tag]` (say, "codex"), instead of a hand-written "codex: " prefix. */
export function logFor(tag: string): ConsolaInstance {
  const child = log.withTag(tag);
  tagged.add(child);
  return child;
}

export function setLogLevel(level: LogLevelName): void {
  for (const l of [log, ...tagged]) l.level = LogLevels[level];
}

/**
 * Another place every log line goes (dl serve forwards them to the MCP client). Tagged
 * loggers copy their reporters when made, so the existing ones get it too.
 */
export function addLogReporter(reporter: ConsolaReporter): void {
  for (const l of [log, ...tagged]) l.addReporter(reporter);
}
