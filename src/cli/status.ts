import { defineCommand } from "citty";
import { VERSION } from "../version.ts";
import { configOrExit, EXIT } from "./config-or-exit.ts";
import { gatherStatus, renderStatus } from "./status-report.ts";

export const statusCommand = defineCommand({
  meta: {
    name: "status",
    description: "Health check: config, gateway models, pools, jobs (exit 0 ok, 1 unhealthy, 2 bad config)",
  },
  args: {
    json: { type: "boolean", description: "Print one JSON object on stdout", default: false },
  },
  async run({ args }) {
    const config = configOrExit();
    const report = await gatherStatus(config, VERSION);
    process.stdout.write(args.json ? `${JSON.stringify(report)}\n` : `${renderStatus(report)}\n`);
    process.exitCode = report.healthy ? EXIT.ok : EXIT.failure;
  },
});
