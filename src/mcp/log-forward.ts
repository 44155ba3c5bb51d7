import type { LoggingLevel, Server } from "@modelcontextprotocol/server";
import type { ConsolaReporter } from "consola/core";
import { addLogReporter } from "../log.ts";

/** consola's message types → MCP's syslog levels. */
const LEVELS: Record<string, LoggingLevel> = {
  fatal: "critical",
  error: "error",
  warn: "warning",
  log: "info",
  info: "info",
  success: "info",
  ready: "info",
  start: "info",
  box: "info",
  debug: "debug",
  trace: "debug",
  verbose: "debug",
};

/**
 * dl's own log lines (warnings such as an unreadable account file or a job service that
 * could not start) also go to the MCP client as `notifications/message`, which is what
 * the `logging` capability promises. The SDK drops those below the level the client set
 * with `logging/setLevel`; stderr keeps getting every line as before. `current` is the
 * server instance serving the connection (serveStdio makes it when the client opens).
 */
export function forwardLogsTo(current: () => Server | undefined): void {
  const reporter: ConsolaReporter = {
    log(entry) {
      const server = current();
      if (!server?.transport) return;
      const data = entry.args.map((a) => (typeof a === "string" ? a : String(a))).join(" ");
      const level = LEVELS[entry.type] ?? "info";
      // A client that cannot take the message must not turn one log line into another.
      server.sendLoggingMessage({ level, logger: entry.tag || "dl", data }).catch(() => undefined);
    },
  };
  addLogReporter(reporter);
}
