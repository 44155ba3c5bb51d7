import { defineCommand } from "citty";
import { describeError, isDlError } from "../errors.ts";
import { cancelRefusal } from "../jobs/engine/cancel.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { cancelFromShell, shellCanceller } from "../jobs/shell/cancel.ts";
import type { FoundJob } from "../jobs/shell/job-finder.ts";
import { canonicalPath } from "../sys/paths.ts";
import { sanitizeLine } from "../sys/sanitize.ts";
import { shellWord } from "../sys/shell-word.ts";
import { resolveWorkspace } from "../sys/workspace.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { jobFromArg } from "./job-arg.ts";

/** How long dl cancel waits for a live server to stop a running job before saying it asked. */
const OWNER_WAIT_MS = 15_000;

const def = defineCommand({
  meta: {
    name: "cancel",
    description:
      "Cancel jobs of this folder's project, or of dead servers (exit 0 cancelled or already ended, 1 refused or not ended yet, 2 unknown id)",
  },
  args: {
    ids: { type: "positional", required: true, description: "Job ids (cx-…, gm-…, dsh-…, ag-…)" },
    json: { type: "boolean", default: false, description: "One JSON object per job" },
  },
  async run({ args }) {
    const config = configOrExit();
    const ids = [...new Set((args._ as string[]).filter((x) => x.length > 0))];
    const jobs: FoundJob[] = [];
    for (const id of ids) {
      const j = jobFromArg("cancel", config, id);
      if (!j) return;
      jobs.push(j);
    }
    const project = (await resolveWorkspace(canonicalPath(process.cwd()), config.childEnv)).project;
    // Every job is checked before any is changed: a refusal cancels nothing.
    const refused = jobs.find((j) => cancelRefusal(j.row, shellCanceller(project, j.live.owner)) !== null);
    if (refused) {
      process.stderr.write(`dl cancel: ${shellRefusal(refused, project)}; nothing was cancelled\n`);
      process.exitCode = EXIT.failure;
      return;
    }
    let allEnded = true;
    for (const j of jobs) {
      try {
        const r = await cancelFromShell(j, {
          callerProject: project,
          identities: sysIdentities,
          now: Date.now,
          waitMs: OWNER_WAIT_MS,
          graceMs: 2000,
        });
        if (!r.changed && r.note !== "already finished") allEnded = false;
        const note = r.note ? ` (${sanitizeLine(r.note, 300)})` : "";
        process.stdout.write(args.json ? `${JSON.stringify(r)}\n` : `${r.id} ${r.status.toUpperCase()}${note}\n`);
      } catch (e) {
        allEnded = false;
        const msg = isDlError(e) ? e.message : describeError(e);
        process.stderr.write(`dl cancel: ${j.row.id}: ${msg}\n`);
      }
    }
    process.exitCode = allEnded ? EXIT.ok : EXIT.failure;
  },
});

/**
 * Why this folder may not cancel a job, said for a shell: whose it is, and the command
 * that cancels it from where it may be cancelled.
 */
function shellRefusal(j: FoundJob, here: string): string {
  const r = j.row;
  const dir = sanitizeLine(r.workdir, 400);
  return (
    `${r.id} belongs to the project ${sanitizeLine(r.project, 400)}, whose server (pid ${r.owner_pid}) is alive, and this folder is in ${sanitizeLine(here, 400)}; ` +
    `cancel it from its project: cd ${shellWord(dir)} && dl cancel ${r.id} (or cancel_${r.provider} in that project's session)`
  );
}

export const cancelCommand: DlCommand = {
  def,
  variadic: true,
  examples: ["dl cancel cx-3f9a2b1c4d", "dl cancel ag-0a1b2c3d4e dsh-5e6f7a8b9c --json"],
};
