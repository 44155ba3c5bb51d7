import { defineCommand } from "citty";
import { pruneIdlePools } from "../dispatch/prune.ts";
import { reapAll } from "../jobs/maintenance.ts";
import { forgetVanishedStores, knownJobStores } from "../jobs/store-registry.ts";
import { sysIdentities } from "../jobs/sys-adapters.ts";
import { pruneDelegationTranscripts } from "../jobs/transcript-prune.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit, EXIT } from "./config-or-exit.ts";

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
    const reports = await reapAll(knownJobStores(config.paths), {
      identities: sysIdentities,
      retentionMs: config.jobs.retentionDays * 86_400_000,
      dryRun,
    });
    const prunedPools = dryRun ? [] : pruneIdlePools(config.paths.slotsDir);
    forgetVanishedStores(config.paths.storesRegistryDir, config.paths.isolationRoot, dryRun);
    const before = Date.now() - config.jobs.retentionDays * 86_400_000;
    const transcripts = pruneDelegationTranscripts(knownJobStores(config.paths, true), before, dryRun);
    if (args.json) {
      process.stdout.write(
        `${JSON.stringify({ dry_run: dryRun, providers: reports, pruned_pools: prunedPools, pruned_transcripts: transcripts })}\n`,
      );
    } else {
      if (prunedPools.length) process.stdout.write(`pools: removed ${prunedPools.length} idle pool folder(s)\n`);
      if (transcripts)
        process.stdout.write(`delegations: ${dryRun ? "would prune" : "pruned"} ${transcripts} old transcript(s)\n`);
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
