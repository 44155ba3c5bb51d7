import { defineCommand } from "citty";
import { jobStateDirs } from "../sys/paths.ts";
import { BUILD } from "../version.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { interruptScope } from "./interrupt.ts";
import { renderStatus } from "./status-render.ts";
import { gatherStatus } from "./status-report.ts";
import { watchLive, watchSnapshot } from "./status-watch.ts";
import { refuseIrregularStores } from "./stores-or-exit.ts";

const def = defineCommand({
  meta: {
    name: "status",
    description: "Health check: config, gateway models, pools, jobs (exit 0 ok, 1 unhealthy, 2 bad config)",
  },
  args: {
    json: { type: "boolean", description: "Print one JSON object on stdout", default: false },
    watch: {
      type: "boolean",
      description:
        "Live view of pools, jobs and the Codex account, every second until Ctrl-C (one snapshot when not a terminal)",
      default: false,
    },
  },
  async run({ args }) {
    const config = configOrExit();
    if (refuseIrregularStores("status", jobStateDirs(config.paths))) return;
    if (args.watch) {
      if (args.json) {
        process.stderr.write("dl status: --watch and --json cannot be combined (run dl help status)\n");
        process.exitCode = EXIT.usage;
        return;
      }
      if (!process.stdout.isTTY) {
        process.stdout.write(await watchSnapshot(config));
        return;
      }
      using interrupt = interruptScope();
      await watchLive(config, interrupt.signal, process.stdout);
      return;
    }
    const { report, providerText } = await gatherStatus(config, BUILD);
    process.stdout.write(args.json ? `${JSON.stringify(report)}\n` : `${renderStatus(report, providerText)}\n`);
    process.exitCode = report.healthy ? EXIT.ok : EXIT.failure;
  },
});

export const statusCommand: DlCommand = {
  def,
  examples: ["dl status", "dl status --json | jq .failed_checks", "dl status --watch"],
};
