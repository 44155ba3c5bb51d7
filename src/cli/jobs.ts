import { defineCommand } from "citty";
import type { Config } from "../config.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { listJobs } from "../jobs/shell/job-finder.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { PROVIDERS } from "../providers.ts";
import { ACTIVE_STATUSES, TERMINAL_STATUSES } from "../store/types.ts";
import type { UsageRow } from "../store/usage.ts";
import { canonicalPath } from "../sys/paths.ts";
import { sanitizeLine } from "../sys/sanitize.ts";
import { delegationRows } from "../usage/delegations.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { jobJson, projectName, table, whoRuns } from "./job-format.ts";
import { refuseIrregularStores } from "./stores-or-exit.ts";
import { humanAge, isoTime, whenText } from "./time-format.ts";

/** What --status takes: the stored statuses, plus how dl reads a job (waiting for a slot, orphaned). */
const STATES = [...ACTIVE_STATUSES, "waiting", "orphaned", ...TERMINAL_STATUSES];
/** What --kind takes: each job provider, and the delegations that ran in a call (no job row). */
const KINDS = [...PROVIDERS.map((d) => d.name), "delegation"];

type Listed = { created: number; json: Record<string, unknown>; cells: string[] };

/** A delegation as dl jobs lists it: from its ledger row; it ran inside one call, so it is over. */
function delegationListed(r: UsageRow, now: number): Listed {
  const created = r.at - r.elapsed_ms;
  const model = r.model_used || r.model_requested;
  const json = {
    id: r.id,
    kind: "delegation",
    tool: r.kind,
    state: r.outcome,
    project: r.project,
    model,
    created_at: isoTime(created),
    ended_at: isoTime(r.at),
    age_s: Math.round((now - created) / 1000),
    duration_s: Math.round(r.elapsed_ms / 100) / 10,
  };
  const cells = [r.id, "delegation", r.outcome, projectName(r.project), sanitizeLine(`${r.kind} on ${model}`, 60)];
  return { created, json, cells: [...cells, whenText(created, now), humanAge(r.elapsed_ms)] };
}

type Filter = { status?: string; kind?: string; project?: string; limit: number };

function delegationsFor(config: Config, f: Filter, now: number): { listed: Listed[]; problems: string[] } {
  if (f.kind && f.kind !== "delegation") return { listed: [], problems: [] };
  const since = now - config.jobs.retentionDays * 86_400_000;
  const { rows, problems } = delegationRows(knownJobStores(config.paths, true), since);
  const listed = rows
    .filter((r) => !f.status || r.outcome === f.status)
    .filter((r) => !f.project || r.project === f.project || r.project.startsWith(`${f.project}/`))
    .map((r) => delegationListed(r, now));
  return { listed, problems };
}

/** Jobs and delegations, newest first, at most `limit`. */
function gather(config: Config, f: Filter, now: number) {
  const jobs =
    f.kind === "delegation"
      ? { jobs: [], problems: [] }
      : listJobs(knownJobStores(config.paths), { ...f }, sysIdentities);
  const d = { model: config.backend.model, codingModel: config.backend.codingModel };
  const fromJobs: Listed[] = jobs.jobs.map((j) => {
    const json = jobJson(j, now, d);
    const dur = json.duration_s === null ? "-" : humanAge(Number(json.duration_s) * 1000);
    const state = j.window === "closed" ? `${j.verdict.state} (window closed)` : j.verdict.state;
    const cells = [j.row.id, j.row.provider, state, projectName(j.row.project), whoRuns(j, d)];
    return { created: j.row.created_at, json, cells: [...cells, whenText(j.row.created_at, now), dur] };
  });
  const dels = delegationsFor(config, f, now);
  const listed = [...fromJobs, ...dels.listed].sort((a, b) => b.created - a.created).slice(0, f.limit);
  const problems = [
    ...jobs.problems.map((p) => `the ${p.provider} store at ${p.state_dir}: ${p.error}`),
    ...dels.problems,
  ];
  return { listed, jobProblems: jobs.problems, problems };
}

const def = defineCommand({
  meta: {
    name: "jobs",
    description:
      "List every job and delegation on this machine, newest first (exit 0, 1 when a job store cannot be read)",
  },
  args: {
    status: {
      type: "enum",
      options: STATES,
      description: "Only jobs in this state (as dl wait and dl status read it)",
    },
    kind: { type: "enum", options: KINDS, description: "Only this kind of job, or delegation" },
    project: {
      type: "string",
      valueHint: "PATH",
      description: "Only jobs of the project at PATH (a checkout or worktree)",
    },
    limit: { type: "string", valueHint: "N", default: "20", description: "At most N entries (default 20)" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout" },
  },
  run({ args }) {
    const config = configOrExit();
    if (refuseIrregularStores("jobs", knownJobStores(config.paths, true))) return;
    const limit = Number(args.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      process.stderr.write(
        `dl jobs: --limit must be a whole number from 1 to 10000, got ${JSON.stringify(String(args.limit).slice(0, 20))}; e.g. dl jobs --limit 50\n`,
      );
      process.exitCode = EXIT.usage;
      return;
    }
    const now = Date.now();
    const project = args.project ? canonicalPath(args.project) : undefined;
    const { listed, jobProblems, problems } = gather(
      config,
      { status: args.status, kind: args.kind, project, limit },
      now,
    );
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ jobs: listed.map((l) => l.json), unreadable_stores: jobProblems })}\n`);
    } else if (listed.length === 0) {
      const what = problems.length
        ? "no jobs or delegations in the stores that could be read (the others are named below)"
        : args.status || args.kind || args.project
          ? "no job or delegation matches"
          : "no jobs or delegations yet";
      process.stdout.write(
        `${what} (submit one through the MCP tools, or dl run AGENT TASK; dl jobs lists every store this machine's servers use)\n`,
      );
    } else {
      const head = ["ID", "KIND", "STATE", "PROJECT", "RUNS ON", "CREATED", "DURATION"];
      process.stdout.write(`${table([head, ...listed.map((l) => l.cells)])}\n`);
    }
    for (const p of problems) process.stderr.write(`dl jobs: cannot read ${p}; run dl status for the store's state\n`);
    process.exitCode = problems.length ? EXIT.failure : EXIT.ok;
  },
});

export const jobsCommand: DlCommand = {
  def,
  examples: [
    "dl jobs",
    "dl jobs --status running --kind codex",
    "dl jobs --kind delegation --limit 5",
    "dl jobs --project . --json | jq '.jobs[0]'",
  ],
};
