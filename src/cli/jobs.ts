import { defineCommand } from "citty";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { listJobs } from "../jobs/shell/job-finder.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { PROVIDERS } from "../providers.ts";
import { ACTIVE_STATUSES, TERMINAL_STATUSES } from "../store/types.ts";
import { canonicalPath } from "../sys/paths.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { humanAge, jobJson, projectName, table, whoRuns } from "./job-format.ts";

/** What --status takes: the stored statuses, plus how dl reads a job (waiting for a slot, orphaned). */
const STATES = [...ACTIVE_STATUSES, "waiting", "orphaned", ...TERMINAL_STATUSES];

const def = defineCommand({
  meta: {
    name: "jobs",
    description: "List every job on this machine, newest first (exit 0, 1 when a job store cannot be read)",
  },
  args: {
    status: {
      type: "enum",
      options: STATES,
      description: "Only jobs in this state (as dl wait and dl status read it)",
    },
    kind: { type: "enum", options: PROVIDERS.map((d) => d.name), description: "Only this kind of job" },
    project: {
      type: "string",
      valueHint: "PATH",
      description: "Only jobs of the project at PATH (a checkout or worktree)",
    },
    limit: { type: "string", valueHint: "N", default: "20", description: "At most N jobs (default 20)" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout" },
  },
  run({ args }) {
    const config = configOrExit();
    const limit = Number(args.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      process.stderr.write(
        `dl jobs: --limit must be a whole number from 1 to 10000, got ${JSON.stringify(String(args.limit).slice(0, 20))}\n`,
      );
      process.exitCode = EXIT.usage;
      return;
    }
    const now = Date.now();
    const { jobs, problems } = listJobs(
      knownJobStores(config.paths),
      { status: args.status, kind: args.kind, project: args.project ? canonicalPath(args.project) : undefined, limit },
      sysIdentities,
    );
    if (args.json) {
      process.stdout.write(
        `${JSON.stringify({ jobs: jobs.map((j) => jobJson(j, now)), unreadable_stores: problems })}\n`,
      );
    } else if (jobs.length === 0) {
      process.stdout.write(
        "no jobs yet (submit one through the MCP tools; dl jobs lists every store this machine's servers use)\n",
      );
    } else {
      const rows = jobs.map((j) => {
        const v = jobJson(j, now);
        const dur = v.duration_s === null ? "-" : humanAge(Number(v.duration_s) * 1000);
        return [
          j.row.id,
          j.row.provider,
          j.window === "closed" ? `${j.verdict.state} (window closed)` : j.verdict.state,
          projectName(j.row.project),
          whoRuns(j),
          humanAge(now - j.row.created_at),
          dur,
        ];
      });
      process.stdout.write(
        `${table([["ID", "KIND", "STATE", "PROJECT", "MODEL/AGENT", "AGE", "DURATION"], ...rows])}\n`,
      );
    }
    for (const p of problems)
      process.stderr.write(`dl jobs: the ${p.provider} store at ${p.state_dir} cannot be read: ${p.error}\n`);
    process.exitCode = problems.length ? EXIT.failure : EXIT.ok;
  },
});

export const jobsCommand: DlCommand = {
  def,
  examples: [
    "dl jobs",
    "dl jobs --status running --kind codex",
    "dl jobs --project . --limit 5",
    "dl jobs --json | jq '.jobs[0]'",
  ],
};
