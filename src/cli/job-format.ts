import { basename, dirname } from "node:path";
import { sanitizeLine } from "../jobs/sanitize.ts";
import type { FoundJob } from "../jobs/shell/job-finder.ts";
import { agentOf } from "../jobs/shell/maintenance.ts";

/** A duration as people read it: 42s, 3m05s, 2h10m, 3d04h. */
export function humanAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, "0")}h`;
}

/** The project key is a git common dir (/x/repo/.git): show the repository's folder name. */
export function projectName(project: string): string {
  const base = basename(project);
  return sanitizeLine(base === ".git" ? basename(dirname(project)) : base, 40);
}

/** Model or agent, as a job's row records it. */
export function whoRuns(j: FoundJob): string {
  const agent = agentOf(j.row.params);
  const model = j.row.model ?? "";
  return sanitizeLine(agent ? `${agent}${model ? ` (${model})` : ""}` : model || "(CLI default)", 48);
}

/** The JSON a shell command prints for a job: the row's facts and how it reads. */
export function jobJson(j: FoundJob, now: number): Record<string, unknown> {
  const r = j.row;
  const end = r.ended_at ?? (r.started_at !== null ? now : null);
  return {
    id: r.id,
    kind: r.provider,
    state: j.verdict.state,
    status: r.status,
    window: j.window,
    reason: sanitizeLine(j.verdict.reason, 300) || null,
    project: r.project,
    workdir: sanitizeLine(r.workdir, 4000),
    model: r.model,
    agent: agentOf(r.params),
    created_at: new Date(r.created_at).toISOString(),
    age_s: Math.round((now - r.created_at) / 1000),
    duration_s: r.started_at !== null && end !== null ? Math.round((end - r.started_at) / 100) / 10 : null,
  };
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
