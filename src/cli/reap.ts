import { defineCommand } from "citty";
import { ConversationStore } from "../agent/conversation-store.ts";
import { pruneIdlePools } from "../dispatch/prune.ts";
import { sysIdentities } from "../jobs/machine.ts";
import { reapAll } from "../jobs/maintenance.ts";
import { jobStateDirs } from "../sys/paths.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { refuseIrregularStores } from "./stores-or-exit.ts";

const def = defineCommand({
  meta: {
    name: "reap",
    description: "End jobs of dead servers (verified orphans killed) and prune old finished jobs",
  },
  args: {
    "dry-run": { type: "boolean", default: false, description: "Report what would happen; change and kill nothing" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout" },
  },
  async run({ args }) {
    const config = configOrExit();
    const dryRun = args["dry-run"];
    const dirs = jobStateDirs(config.paths);
    if (refuseIrregularStores("reap", dirs)) return;
    const reports = await reapAll(dirs, {
      identities: sysIdentities,
      retentionMs: config.jobs.retentionDays * 86_400_000,
      dryRun,
    });
    const prunedPools = dryRun ? [] : pruneIdlePools(config.paths.slotsDir);
    // Kept conversations (follow-ups) go after as long as finished jobs do.
    const retentionMs = config.jobs.retentionDays * 86_400_000;
    const prunedConversations = dryRun ? 0 : ConversationStore.in(config.paths.stateDirs.agent).prune(retentionMs);
    if (args.json) {
      const out = { dry_run: dryRun, providers: reports, pruned_pools: prunedPools };
      process.stdout.write(`${JSON.stringify({ ...out, pruned_conversations: prunedConversations })}\n`);
    } else {
      if (prunedPools.length) process.stdout.write(`pools: removed ${prunedPools.length} idle pool folder(s)\n`);
      if (prunedConversations)
        process.stdout.write(`conversations: removed ${prunedConversations} older than the job retention\n`);
      if (reports.length === 0) process.stdout.write("no job stores yet: nothing to reap\n");
      for (const r of reports) {
        if (r.error) {
          process.stdout.write(`${r.provider}: store unusable (${r.error})\n`);
          continue;
        }
        const verb = dryRun ? "would end" : "ended";
        process.stdout.write(
          `${r.provider}: ${verb} ${r.reaped.length} job(s) of dead servers, ${dryRun ? "would prune" : "pruned"} ${r.pruned} finished\n`,
        );
        for (const a of r.reaped)
          process.stdout.write(`  ${a.id} → ${a.status}${a.killed_pid ? ` (pid ${a.killed_pid})` : ""}: ${a.reason}\n`);
      }
    }
    process.exitCode = reports.some((r) => r.error) ? EXIT.failure : EXIT.ok;
  },
});

export const reapCommand: DlCommand = {
  def,
  examples: ["dl reap --dry-run", "dl reap --json"],
};
