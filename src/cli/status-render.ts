import type { PoolStatus } from "../dispatch/status.ts";
import type { ActiveJob, JobsSummary } from "../jobs/shell/maintenance.ts";
import { versionLine } from "../version.ts";
import type { StatusReport } from "./status-report.ts";
import { storeLabels } from "./store-label.ts";
import { humanAge as age } from "./time-format.ts";

/** `dl status` as text: one section per concern (each provider's part as its module renders it), failed checks last. */
export function renderStatus(r: StatusReport, providerText: readonly string[]): string {
  const cfg = r.config as { gateway: { kind: string }; backend: { model: string; coding_model: string } };
  const lines = [
    `${versionLine(r)} — ${r.healthy ? "healthy" : "UNHEALTHY"}`,
    `gateway: ${cfg.gateway.kind}   default model: ${cfg.backend.model}   coding model: ${cfg.backend.coding_model}`,
    ...renderSettings(r.settings),
    ...renderBackends(r),
    "",
    "state dirs:",
    ...r.state_dirs.map((d) => {
      const state = d.writable ? "ok   " : "FAIL ";
      const note = d.error ? `  (${d.error})` : d.exists ? "" : "  (not created yet: dl creates it on first use)";
      return `  ${d.name.padEnd(20)} ${state} ${d.path}${note}`;
    }),
    ...renderPools(r),
    ...r.other_cache_dirs.flatMap((o) =>
      renderPools(o, false, `pools of dl serve pid ${o.server_pids.join(", ")} (cache dir ${o.cache_dir}):`),
    ),
    "",
    "jobs:",
    ...renderAllJobs(r.jobs, Date.now(), false, { defaultModel: cfg.backend.model }),
    ...providerText,
    ...renderMcpTools(r),
  ];
  if (r.failed_checks.length) lines.push("", "failed checks:", ...r.failed_checks.map((f) => `  - ${f}`));
  return lines.join("\n");
}

/** The settings file and every setting that is not at its default, with where it came from. */
function renderSettings(s: StatusReport["settings"]): string[] {
  const set = Object.entries(s.sources).filter(([, from]) => from !== "default");
  const file = s.file_mode ? `${s.file} (${s.file_mode})` : `${s.file} (none yet: dl init writes it)`;
  const width = Math.max(0, ...set.map(([n]) => n.length));
  return [
    "",
    `settings file: ${file}`,
    ...set.map(([n, from]) => `  ${n.padEnd(width)}  from the ${from}`),
    `  ${set.length ? "every other setting" : "every setting"}: its default (docs/CONFIGURATION.md)`,
    ...s.other_servers.map(
      (o) =>
        `  note: dl serve pid ${o.server_pid} runs with ${o.variable}=${o.server_value} (here: ${o.this_value}), set by its host; a shell's dl run uses ${o.this_value} — put it in the settings file for both`,
    ),
  ];
}

function renderBackends(r: StatusReport): string[] {
  const lines = ["", "backends:"];
  for (const b of r.backends) {
    const state = b.reachable && !b.error ? "ok" : "FAIL";
    lines.push(`  ${b.lane.padEnd(14)} ${state.padEnd(5)} ${b.url}  (${b.latency_ms} ms)`);
    if (b.error) lines.push(`    ${b.error}`);
    if (b.models.length) lines.push(`    models: ${b.models.join(", ")}`);
  }
  for (const m of r.models) {
    const state = m.served === null ? "not checked (gateway unreachable)" : m.served ? "served" : "NOT SERVED";
    lines.push(`  ${m.role} model ${m.model} (${m.variable}): ${state}`);
  }
  return lines;
}

export function renderPools(
  r: Pick<StatusReport, "pools">,
  busyOnly = false,
  title = "pools (machine-wide):",
): string[] {
  const lines = ["", title];
  const shown = busyOnly ? r.pools.filter((p) => p.in_use || p.waiting) : r.pools;
  if (!shown.length) lines.push("  (every pool idle)");
  for (const p of shown) {
    const wait = p.waiting ? `, ${p.waiting} waiting` : "";
    lines.push(`  ${p.bucket.padEnd(20)} ${String(p.in_use).padStart(2)}/${p.size} in use${wait}`);
    for (const h of p.holders) lines.push(`    ${holderText(h, Date.now())}`);
  }
  return lines;
}

/** A slot holder as a person reads it: its agent, its model and how long it has held the slot. */
function holderText(h: PoolStatus["holders"][number], now: number): string {
  const since = Date.parse(h.since);
  const held = Number.isFinite(since) ? ` for ${age(now - since)}` : "";
  const who = h.task ? `agent ${h.task}` : "a delegation";
  const asked = h.requested ? ` (asked for ${h.requested})` : "";
  return `${who}, model ${h.model}${asked}${held} (pid ${h.pid})`;
}

/** What a waiting job waits behind: the holders of its pool. */
function waitLine(j: ActiveJob, pools: readonly PoolStatus[], now: number): string {
  const pool = pools.find((p) => p.bucket === j.slot_wait?.bucket);
  const holders = pool?.holders.map((h) => holderText(h, now)) ?? [];
  return `      behind ${holders.length ? holders.join("; ") : "a holder that has not written its record yet"}`;
}

function jobLine(j: ActiveJob, now: number, defaultModel: string): string {
  const from = j.status === "running" && j.started_at !== null ? j.started_at : j.created_at;
  const why = j.reason ? ` (${j.reason})` : "";
  const model = j.model ?? (j.agent ? defaultModel : "the CLI's own model");
  const who = j.agent ? `agent ${j.agent}, model ${model}` : `model ${model}`;
  return `    ${j.id.padEnd(16)} ${j.state} ${age(now - from)}${why}  ${who}  ${j.workdir}`;
}

/** "1 killed_on_restart, 2 lost": how a dead server's jobs read until a reap records them. */
function orphanStatuses(active: readonly ActiveJob[]): string {
  const counts = new Map<string, number>();
  for (const a of active) if (a.orphaned) counts.set(a.state, (counts.get(a.state) ?? 0) + 1);
  return [...counts].map(([state, n]) => `${n} ${state}`).join(", ");
}

type JobsContext = { defaultModel: string; pools?: readonly PoolStatus[] };

/** Every store's jobs, a provider with two stores named by folder too. */
export function renderAllJobs(all: readonly JobsSummary[], now: number, each: boolean, ctx: JobsContext): string[] {
  const labels = storeLabels(all);
  // One column for the counts, however long a store's folder makes its label.
  const width = Math.max(8, ...[...labels.values()].map((l) => l.length));
  return all.flatMap((j) => renderJobs(j, (labels.get(j) ?? j.provider).padEnd(width), now, each, ctx));
}

/**
 * One store's jobs: counts, per project, and with `each` every active job (a waiting
 * one with the holders it waits behind, from `pools`).
 */
function renderJobs(j: JobsSummary, label: string, now: number, each: boolean, ctx: JobsContext): string[] {
  const orphans = j.orphaned ? `, ${j.orphaned} orphaned: ${orphanStatuses(j.active)} (run dl reap)` : "";
  const lines = [`  ${label} ${j.running} running, ${j.queued} queued${orphans}${j.error ? `  (${j.error})` : ""}`];
  if (each)
    for (const a of j.active) {
      lines.push(jobLine(a, now, ctx.defaultModel));
      if (a.state === "waiting") lines.push(waitLine(a, ctx.pools ?? [], now));
    }
  else for (const p of j.projects) lines.push(`    ${p.project}: ${p.running} running, ${p.queued} queued`);
  return lines;
}

/** Which backends' tools tools/list names (DELEGATE_TOOLS overrides what this machine has). */
function renderMcpTools(r: StatusReport): string[] {
  return [
    "",
    "MCP tools (dl serve):",
    ...Object.entries(r.mcp_tools).map(
      ([backend, v]) => `  ${backend.padEnd(8)} ${v.listed ? "listed    " : "not listed"}  ${v.why}`,
    ),
  ];
}
