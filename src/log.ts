// consola's core, with a reporter of our own: consola/basic builds a default logger on
// import that touches process.stdout and process.stderr, and Node's stream objects cost
// `dl serve` several MB it otherwise never needs (its MCP stdio uses Bun's own; bench/startup).
import { type ConsolaInstance, type ConsolaReporter, createConsola, LogLevels } from "consola/core";
import { redact } from "./sys/redact.ts";

/** An argument as consola's basic reporter shows it: text as is, an error by its stack (never its other fields). */
function formatArg(arg: unknown): string {
  if (typeof arg === "string") return arg;
  if (arg instanceof Error) return arg.stack ?? arg.message;
  return Bun.inspect(arg, { colors: false });
}

let stderr: ReturnType<typeof Bun.stderr.writer> | undefined;

/**
 * One line per entry on stderr, `[type] [tag] message`, as consola's basic reporter
 * prints it without colour or date, redacted (sys/redact.ts). Through Bun's own sink for fd 2: written at once
 * when the pipe has room, queued (never blocking the server) when a host is slow to read.
 */
const stderrReporter: ConsolaReporter = {
  log(entry) {
    const message = entry.args.map(formatArg).join(" ");
    const line = [entry.type && `[${entry.type}]`, entry.tag && `[${entry.tag}]`, message].filter(Boolean).join(" ");
    try {
      stderr ??= Bun.stderr.writer();
      stderr.write(`${redact(line)}\n`);
      // A stderr nobody reads any more must not turn a log line into a crash.
      Promise.resolve(stderr.flush()).catch(() => undefined);
    } catch {
      // stderr closed: a log line is never worth failing for.
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

/** A logger whose lines carry `[tag]` (say, a provider's name), instead of a hand-written "<tag>: " prefix. */
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
