import { defineCommand } from "citty";
import { readTranscript } from "../agent/transcript.ts";
import type { Config } from "../config.ts";
import { jobFiles } from "../jobs/engine/job-files.ts";
import { pollView } from "../jobs/engine/poll.ts";
import type { FoundJob } from "../jobs/shell/job-finder.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { readTreeReport, treeReportLines } from "../sandbox/index.ts";
import type { UsageRow } from "../store/usage.ts";
import { sanitizeLine } from "../sys/sanitize.ts";
import { findDelegationRow } from "../usage/delegations.ts";
import { isDelegationId, logIdProblem } from "../usage/job-id.ts";
import { findDelegationTranscript } from "../usage/transcript-path.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { jobFromArg } from "./job-arg.ts";
import { jobJson, jobModel, type ModelDefaults, projectName } from "./job-format.ts";
import { humanAge, isoTime, whenText } from "./time-format.ts";
import { usageLine } from "./usage-text.ts";

/** Everything dl show prints: the MCP poll view, how the job reads, its timings and its files. */
function showJson(j: FoundJob, now: number, d: ModelDefaults): Record<string, unknown> {
  const r = j.row;
  return {
    ...jobJson(j, now, d),
    poll: pollView(r, now, j.live),
    timings: { created_at: isoTime(r.created_at), started_at: isoTime(r.started_at), ended_at: isoTime(r.ended_at) },
    outcome: { status: r.status, exit_code: r.exit_code, failure_kind: r.failure_kind },
    files: jobFiles(j.store.stateDir, r.id),
    store: j.store.stateDir,
    logs: `dl logs ${r.id}`,
  };
}

const secs = (s: number | null) => (s === null ? "-" : humanAge(s * 1000));

function modelText(j: FoundJob, d: ModelDefaults): string {
  const m = jobModel(j, d);
  if (!m.model) return "the CLI's own default";
  return m.source === "default" ? `${m.model} (the default for this agent)` : m.model;
}

function renderShow(j: FoundJob, now: number, d: ModelDefaults): string {
  const r = j.row;
  const p = pollView(r, now, j.live);
  const f = jobFiles(j.store.stateDir, r.id);
  const agent = (jobJson(j, now, d).agent as string | null) ?? null;
  const reason = j.verdict.reason ? ` (${sanitizeLine(j.verdict.reason, 300)})` : "";
  const lines = [
    `${r.id}  ${r.provider} job  ${j.verdict.state}${reason}`,
    `  project   ${projectName(r.project)}  (${sanitizeLine(r.project, 400)})`,
    `  workdir   ${p.workdir}`,
    `  runs on   ${agent ? `agent ${agent}, ` : ""}model ${modelText(j, d)}${p.effort ? `, effort ${p.effort}` : ""}`,
    `  created   ${whenText(r.created_at, now)}, queued ${secs(p.queued_s)}`,
    `  started   ${r.started_at === null ? "-" : whenText(r.started_at, now)}   ended ${r.ended_at === null ? "-" : whenText(r.ended_at, now)}   took ${secs(p.elapsed_s)}`,
    `  outcome   ${r.status}, exit ${p.exit_code ?? "-"}${p.failure_kind ? `, failure kind ${p.failure_kind}` : ""}${p.retry_count ? `, ${p.retry_count} retries` : ""}`,
  ];
  const used = usageLine(p.usage);
  if (used) lines.push(`  usage     ${used}`);
  const tree = readTreeReport(p);
  for (const [i, l] of (tree ? treeReportLines(tree) : []).entries())
    lines.push(`  ${i === 0 ? "changes " : "        "}  ${sanitizeLine(l, 300)}`);
  for (const w of p.warnings.slice(0, 5)) lines.push(`  warning   ${sanitizeLine(String(w), 200)}`);
  if (p.final_response) lines.push(`  response  ${sanitizeLine(p.final_response, 300)}`);
  lines.push(`  files     ${f.dir}${f.files.length ? "" : " (none)"}`);
  for (const file of f.files)
    lines.push(`            ${file.name}${file.kind === "file" ? `  ${file.bytes} B` : `  (${file.kind})`}`);
  lines.push(`  next      dl logs ${r.id}`);
  return lines.join("\n");
}

/** A delegation: its ledger row and what its transcript recorded. */
function delegationJson(config: Config, row: UsageRow): Record<string, unknown> {
  const file = findDelegationTranscript(knownJobStores(config.paths, true), row.id);
  const steps = file
    ? (readTranscript(file, 0, { refuseForeign: true })?.lines.filter((l) => l.t !== "end").length ?? 0)
    : null;
  return {
    id: row.id,
    kind: "delegation",
    tool: row.kind,
    state: row.outcome,
    project: row.project,
    model_requested: row.model_requested,
    model_used: row.model_used || null,
    created_at: isoTime(row.at - row.elapsed_ms),
    ended_at: isoTime(row.at),
    duration_s: Math.round(row.elapsed_ms / 100) / 10,
    usage: {
      input_tokens: row.input_tokens,
      cache_read_tokens: row.cache_read,
      cache_write_tokens: row.cache_write,
      output_tokens: row.output_tokens,
    },
    steps,
    transcript: file,
    logs: file ? `dl logs ${row.id}` : null,
  };
}

function renderDelegation(v: Record<string, unknown>, row: UsageRow, now: number): string {
  const used = row.model_used && row.model_used !== row.model_requested ? ` (answered by ${row.model_used})` : "";
  return [
    `${row.id}  delegation (${row.kind})  ${row.outcome}`,
    `  project   ${projectName(row.project)}  (${sanitizeLine(row.project, 400)})`,
    `  model     ${row.model_requested}${used}`,
    `  ended     ${whenText(row.at, now)}, took ${humanAge(row.elapsed_ms)}`,
    `  usage     ${usageLine(v.usage)}`,
    `  steps     ${v.steps === null ? "no transcript kept" : v.steps}`,
    ...(v.logs ? [`  next      ${v.logs}`] : []),
  ].join("\n");
}

function showDelegation(config: Config, id: string, json: boolean): void {
  const row = findDelegationRow(knownJobStores(config.paths, true), id);
  if (!row) {
    process.stderr.write(
      `dl show: no delegation ${id} on this machine (older than the job retention, or never run here); dl jobs --kind delegation lists them\n`,
    );
    process.exitCode = EXIT.usage;
    return;
  }
  const v = delegationJson(config, row);
  process.stdout.write(json ? `${JSON.stringify(v)}\n` : `${renderDelegation(v, row, Date.now())}\n`);
  process.exitCode = EXIT.ok;
}

const def = defineCommand({
  meta: {
    name: "show",
    description:
      "One job or delegation: how it reads, timings, outcome, usage and where its files are (exit 2 unknown id)",
  },
  args: {
    id: {
      type: "positional",
      required: true,
      description: "A job id (cx-…, gm-…, dsh-…, ag-…) or a delegation id (dg-…)",
    },
    json: { type: "boolean", default: false, description: "One JSON object on stdout (times in ISO 8601)" },
  },
  run({ args }) {
    const config = configOrExit();
    const id = String(args.id);
    const bad = logIdProblem(id);
    if (bad) {
      process.stderr.write(`dl show: ${bad}; dl jobs lists the ids on this machine\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    if (isDelegationId(id)) return showDelegation(config, id, args.json);
    const job = jobFromArg("show", config, id);
    if (!job) return;
    const now = Date.now();
    const d = { model: config.backend.model, codingModel: config.backend.codingModel };
    process.stdout.write(args.json ? `${JSON.stringify(showJson(job, now, d))}\n` : `${renderShow(job, now, d)}\n`);
    process.exitCode = EXIT.ok;
  },
});

export const showCommand: DlCommand = {
  def,
  examples: ["dl show cx-3f9a2b1c4d", "dl show dg-5e6f7a8b9c", "dl show ag-0a1b2c3d4e --json | jq .timings"],
};
