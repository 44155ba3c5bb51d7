import { createConsola } from "consola/basic";

/**
 * The only logger. It writes to stderr because stdout of `dl serve` carries MCP frames
 * and stdout of other commands carries data.
 */
export const log = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  level: 3,
  formatOptions: { date: false, colors: false, compact: true },
});

export function setLogLevel(level: "silent" | "error" | "warn" | "info" | "debug"): void {
  log.level = { silent: -999, error: 0, warn: 1, info: 3, debug: 4 }[level];
}
