import { defineCommand } from "citty";
import { ConversationStore } from "../agent/conversation-store.ts";
import type { Config } from "../config.ts";
import { pruneIdlePools } from "../dispatch/prune.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { orphanHandOver } from "../jobs/shell/hand-over.ts";
import { reapAll } from "../jobs/shell/maintenance.ts";
import { forgetVanishedStores, knownJobStores } from "../jobs/shell/store-registry.ts";
import { pruneQuarantine } from "../sandbox/index.ts";
import { selfArgv } from "../sys/self-command.ts";
import { pruneDelegationTranscripts } from "../usage/transcript-prune.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { storeLabels } from "./store-label.ts";
import { refuseIrregularStores } from "./stores-or-exit.ts";

const def = defineCommand({
  meta: {
    name: "reap",
    description:
      "End jobs of dead servers (verified orphans killed), hand their queued ones to supervisors, prune old finished jobs",
  },
  args: {
    "dry-run": { type: "boolean", default: false, description: "Report what would happen; change and kill nothing" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout" },
  },
  async run({ args }) {
    const config = configOrExit();
    const dryRun = args["dry-run"];
    const dirs = knownJobStores(config.paths);
    if (refuseIrregularStores("reap", dirs)) return;
    const reports = await reapAll(dirs, {
      identities: sysIdentities,
      retentionMs: config.jobs.retentionDays * 86_400_000,
      dryRun,
      // What a reaped run spent (an agent job's child keeps its transcript) still reaches the ledger.
      spent: (provider, row, jobDir) =>
        PROVIDER_MODULES.find((m) => m.facts.name === provider)?.spent?.(row, jobDir) ?? null,
      // A killed window's queued job runs on: this binary becomes its supervisor.
      handOver: orphanHandOver({ self: selfArgv(), env: config.supervisorEnv }, sysIdentities),
    });
    const prunedPools = dryRun ? [] : pruneIdlePools(config.paths.slotsDir);
    const kept = housekeeping(config, dryRun);
    if (args.json) {
      const out = { dry_run: dryRun, providers: reports, pruned_pools: prunedPools };
      process.stdout.write(`${JSON.stringify({ ...out, ...kept })}\n`);
    } else {
      if (prunedPools.length) process.stdout.write(`pools: removed ${prunedPools.length} idle pool folder(s)\n`);
      if (kept.pruned_conversations)
        process.stdout.write(`conversations: removed ${kept.pruned_conversations} older than the job retention\n`);
      if (kept.pruned_transcripts)
        process.stdout.write(
          `delegations: ${dryRun ? "would prune" : "pruned"} ${kept.pruned_transcripts} old transcript(s)\n`,
        );
      if (kept.pruned_quarantine)
        process.stdout.write(
          `quarantine: ${dryRun ? "would remove" : "removed"} ${kept.pruned_quarantine} folder(s) older than the job retention\n`,
        );
      if (reports.length === 0) process.stdout.write("no job stores yet: nothing to reap\n");
      const labels = storeLabels(reports);
      for (const r of reports) {
        const name = labels.get(r) ?? r.provider;
        if (r.error) {
          process.stdout.write(
            `${name}: store at ${r.state_dir} unusable (${r.error}); run dl status for its folder's state\n`,
          );
          continue;
        }
        const handed = r.reaped.filter((a) => a.status === "queued").length;
        const handing = handed ? `, ${dryRun ? "would hand" : "handed"} ${handed} queued one(s) to supervisors` : "";
        process.stdout.write(
          `${name}: ${dryRun ? "would end" : "ended"} ${r.reaped.length - handed} job(s) of dead servers${handing}, ${dryRun ? "would prune" : "pruned"} ${r.pruned} finished\n`,
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

/**
 * What goes after as long as finished jobs do: kept conversations (follow-ups), delegation
 * transcripts, dl's cache-dir quarantine folders, and the registry entries of stores whose folder is gone.
 */
function housekeeping(
  config: Config,
  dryRun: boolean,
): { pruned_conversations: number; pruned_transcripts: number; pruned_quarantine: number } {
  const retentionMs = config.jobs.retentionDays * 86_400_000;
  forgetVanishedStores(config.paths.storesRegistryDir, config.paths.isolationRoot, dryRun);
  const stores = knownJobStores(config.paths, true);
  return {
    pruned_conversations: dryRun ? 0 : ConversationStore.in(config.paths.stateDirs.agent).prune(retentionMs),
    pruned_transcripts: pruneDelegationTranscripts(stores, Date.now() - retentionMs, dryRun),
    // What run_bash moved out in delegations the server ran (an agent job's goes with its folder).
    pruned_quarantine: pruneQuarantine(config.paths.quarantineDir, Date.now() - retentionMs, dryRun),
  };
}
