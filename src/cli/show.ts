import { defineCommand } from "citty";
import { jobFiles } from "../jobs/engine/job-files.ts";
import { pollView } from "../jobs/engine/poll.ts";
import { sanitizeLine } from "../jobs/sanitize.ts";
import type { FoundJob } from "../jobs/shell/job-finder.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { jobFromArg } from "./job-arg.ts";
import { humanAge, jobJson } from "./job-format.ts";

/** Everything dl show prints: the MCP poll view, how the job reads, its timings and its files. */
function showJson(j: FoundJob, now: number): Record<string, unknown> {
  const r = j.row;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  return {
    ...jobJson(j, now),
    poll: pollView(r, now, j.live),
    timings: { created_at: iso(r.created_at), started_at: iso(r.started_at), ended_at: iso(r.ended_at) },
    outcome: { status: r.status, exit_code: r.exit_code, failure_kind: r.failure_kind },
    files: jobFiles(j.store.stateDir, r.id),
    store: j.store.stateDir,
    logs: `dl logs ${r.id}`,
  };
}

function renderShow(j: FoundJob, now: number): string {
  const v = showJson(j, now);
  const p = v.poll as ReturnType<typeof pollView>;
  const t = v.timings as Record<string, string | null>;
  const f = v.files as ReturnType<typeof jobFiles>;
  const lines = [
    `${j.row.id}  ${j.row.provider}  ${j.verdict.state}${j.verdict.reason ? ` (${sanitizeLine(j.verdict.reason, 300)})` : ""}`,
    `  project   ${sanitizeLine(j.row.project, 400)}`,
    `  workdir   ${p.workdir}`,
    `  model     ${p.model ?? "-"}${v.agent ? `   agent ${v.agent}` : ""}${p.effort ? `   effort ${p.effort}` : ""}`,
    `  created   ${t.created_at} (${humanAge(now - j.row.created_at)} ago), queued ${p.queued_s}s`,
    `  started   ${t.started_at ?? "-"}   ended ${t.ended_at ?? "-"}   elapsed ${p.elapsed_s ?? "-"}s`,
    `  outcome   ${j.row.status}, exit ${p.exit_code ?? "-"}, failure kind ${p.failure_kind ?? "-"}${p.retry_count ? `, ${p.retry_count} retries` : ""}`,
  ];
  if (p.usage) lines.push(`  usage     ${sanitizeLine(JSON.stringify(p.usage), 300)}`);
  for (const w of p.warnings.slice(0, 5)) lines.push(`  warning   ${sanitizeLine(String(w), 200)}`);
  if (p.final_response) lines.push(`  response  ${sanitizeLine(p.final_response, 300)}`);
  lines.push(`  files     ${f.dir}${f.files.length ? "" : " (none)"}`);
  for (const file of f.files)
    lines.push(`            ${file.name}${file.kind === "file" ? `  ${file.bytes} B` : `  (${file.kind})`}`);
  lines.push(`  logs      dl logs ${j.row.id}`);
  return lines.join("\n");
}

const def = defineCommand({
  meta: {
    name: "show",
    description: "One job: its poll view, timings, outcome and where its files are (exit 2 unknown id)",
  },
  args: {
    id: { type: "positional", required: true, description: "A job id (cx-…, gm-…, dsh-…, ag-…)" },
    json: { type: "boolean", default: false, description: "One JSON object on stdout" },
  },
  run({ args }) {
    const config = configOrExit();
    const job = jobFromArg("show", config, String(args.id));
    if (!job) return;
    const now = Date.now();
    process.stdout.write(args.json ? `${JSON.stringify(showJson(job, now))}\n` : `${renderShow(job, now)}\n`);
    process.exitCode = EXIT.ok;
  },
});

export const showCommand: DlCommand = {
  def,
  examples: ["dl show cx-3f9a2b1c4d", "dl show ag-0a1b2c3d4e --json | jq .timings"],
};
