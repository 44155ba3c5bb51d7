import { writeSync } from "node:fs";
import { formatWithOptions } from "node:util";
// consola's core, with a reporter of our own: consola/basic builds a default logger on
// import that touches process.stdout and process.stderr, and Node's stream objects cost
// `dl serve` about 4 MB it otherwise never needs (its MCP stdio uses Bun's own; bench/startup).
import { type ConsolaInstance, type ConsolaReporter, createConsola, LogLevels } from "consola/core";

/**
 * One line per entry on stderr, `[type] [tag] message`, as consola's basic reporter
 * prints it without colour or date. Written straight to fd 2, synchronously, like
 * Node's stderr on a pipe or a file.
 */
const stderrReporter: ConsolaReporter = {
  log(entry) {
    const message = formatWithOptions({ colors: false, compact: true }, ...entry.args);
    const line = [entry.type && `[${entry.type}]`, entry.tag && `[${entry.tag}]`, message].filter(Boolean).join(" ");
    try {
      writeSync(2, `${line}\n`);
    } catch {
      // stderr closed or full of nowhere: a log line is never worth failing for.
    }
  },
};

/**
 * The only logger. It writes to stderr because stdout of `dl serve` carries MCP frames
 * and stdout of other commands carries data.
 */
export const log = createConsola({ level: LogLevels.info, reporters: [stderrReporter] });

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
