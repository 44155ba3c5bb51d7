import { defineCommand } from "citty";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createServer } from "../mcp/server.ts";
import { defaultDeps } from "../mcp/deps.ts";
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
    const server = createServer(defaultDeps(config, VERSION));
    const transport = new StdioServerTransport();

    let closing = false;
    const shutdown = async (why: string) => {
      if (closing) return;
      closing = true;
      log.debug(`dl serve stopping: ${why}`);
      try {
        await server.close();
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
  },
});
