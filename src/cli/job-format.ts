import { basename, dirname } from "node:path";
import { resolveModel } from "../agent/policy.ts";
import type { Config } from "../config.ts";
import type { FoundJob } from "../jobs/shell/job-finder.ts";
import { agentOf } from "../jobs/shell/maintenance.ts";
import { sanitizeLine } from "../sys/sanitize.ts";

/** The settings a job's model is resolved from when its row names none. */
export type ModelDefaults = Pick<Config["backend"], "model" | "codingModel">;

/** The project key is a git common dir (/x/repo/.git): show the repository's folder name. */
export function projectName(project: string): string {
  const base = basename(project);
  return sanitizeLine(base === ".git" ? basename(dirname(project)) : base, 40);
}

function usedModel(usage: string | null): string | null {
  try {
    const u = JSON.parse(usage ?? "null") as { model_used?: unknown } | null;
    return typeof u?.model_used === "string" && u.model_used ? u.model_used : null;
  } catch {
    return null;
  }
}

/**
 * The model a job runs on: the one its row names, else the one the backend said answered,
 * else (an agent job that named none) the default its `dl run` resolves, the coding model
 * for coding agents; null for a CLI job on its own default.
 */
export function jobModel(
  j: FoundJob,
  d: ModelDefaults,
): { model: string | null; source: "row" | "answer" | "default" } {
  if (j.row.model) return { model: j.row.model, source: "row" };
  const used = usedModel(j.row.usage);
  if (used) return { model: used, source: "answer" };
  const agent = agentOf(j.row.params);
  if (!agent) return { model: null, source: "default" };
  return {
    model: resolveModel({ agentName: agent, defaultModel: d.model, codingModel: d.codingModel }),
    source: "default",
  };
}

/** What runs the job, for a table: "agent coder on local-qwen", "gpt-6.1-terra", "(the CLI's default)". */
export function whoRuns(j: FoundJob, d: ModelDefaults): string {
  const agent = agentOf(j.row.params);
  const { model } = jobModel(j, d);
  const text = agent ? `agent ${agent} on ${model}` : (model ?? "(the CLI's default)");
  return sanitizeLine(text, 60);
}

/** The JSON a shell command prints for a job: the row's facts and how it reads. */
export function jobJson(j: FoundJob, now: number, d: ModelDefaults): Record<string, unknown> {
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
    model: jobModel(j, d).model,
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
