import { defineCommand } from "citty";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createServer } from "../mcp/server.ts";
import { defaultDeps } from "../mcp/deps.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../errors.ts";
import { DB_FILE } from "../store/db.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { configOrExit } from "./config-or-exit.ts";

export const serveCommand = defineCommand({
  meta: {
    name: "serve",
    description: "Run the MCP server on stdio (for claude mcp add)",
  },
  async run() {
    const config = configOrExit();
    const deps = defaultDeps(config, VERSION);
    const server = createServer(deps);
    const transport = new StdioServerTransport();

    let closing = false;
    const shutdown = async (why: string) => {
      if (closing) return;
      closing = true;
      log.debug(`dl serve stopping: ${why}`);
      try {
        // Jobs die with their server: stop them (recorded as such) before leaving.
        await deps.stopJobs();
        await server.close();
      } catch (e) {
        log.error(`dl serve: error while stopping: ${describeError(e)}`);
      } finally {
        process.exit(0);
      }
    };
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
    // The client owns our stdin: when it goes away, so do we.
    process.stdin.on("end", () => void shutdown("stdin closed"));
    process.stdin.on("close", () => void shutdown("stdin closed"));

    await server.connect(transport);
    log.debug(`dl serve ${VERSION} ready on stdio`);
    // Once answering is possible: if Codex jobs were ever recorded here, start the job
    // service now so jobs of servers that died are reaped at start, not on first use.
    // A failure here fails the job tools closed.
    if (existsSync(join(config.paths.codexStateDir, DB_FILE))) {
      deps.codex().catch((e: unknown) => log.warn(`codex jobs unavailable: ${describeError(e)}`));
    }
  },
});
