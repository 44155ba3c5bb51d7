import { type ModelsProbe, probeModels } from "../backends/models-list.ts";
import { backendProbeTargets } from "../backends/probe-targets.ts";
import { redactUrl } from "../backends/url.ts";
import type { Config } from "../config.ts";
import { REDACTED } from "../config.ts";
import { dispatchSettingsFromConfig } from "../dispatch/pools.ts";
import { type PoolStatus, poolStatus } from "../dispatch/status.ts";
import { type JobsSummary, jobsSummary } from "../jobs/maintenance.ts";
import { codexOptionsFromConfig } from "../jobs/providers/codex-options.ts";
import { type CodexStatusReport, codexStatus } from "../jobs/providers/codex-status.ts";
import { dshOptionsFromConfig } from "../jobs/providers/dsh-options.ts";
import { type DshStatusReport, dshStatus } from "../jobs/providers/dsh-status.ts";
import { geminiOptionsFromConfig } from "../jobs/providers/gemini-options.ts";
import { type GeminiStatusReport, geminiStatus } from "../jobs/providers/gemini-status.ts";
import { sysIdentities } from "../jobs/sys-adapters.ts";
import { jobStateDirs } from "../sys/paths.ts";
import { writableProblem } from "../sys/writable.ts";

/**
 * Everything `dl status` reports, gathered once and rendered as text or JSON. Each check
 * says whether it passed; the command's exit code is derived from them.
 */
export type StatusReport = {
  version: string;
  healthy: boolean;
  failed_checks: string[];
  config: Record<string, unknown>;
  backends: (ModelsProbe & { lane: string })[];
  state_dirs: { name: string; path: string; writable: boolean; error?: string }[];
  pools: PoolStatus[];
  jobs: JobsSummary[];
  codex: CodexStatusReport | { error: string };
  dsh: DshStatusReport | { error: string };
  gemini: GeminiStatusReport;
};

const PROBE_TIMEOUT_MS = 3000;

export async function gatherStatus(config: Config, version: string): Promise<StatusReport> {
  const backends = await Promise.all(
    backendProbeTargets(config).map(async (t) => ({
      lane: t.lane,
      ...(await probeModels({ endpointUrl: t.url, apiKey: t.apiKey, headers: t.headers, timeoutMs: PROBE_TIMEOUT_MS })),
    })),
  );
  const p = config.paths;
  const dirs: [string, string][] = [
    ["cache (pool slots)", p.cacheDir],
    ["codex jobs", p.codexStateDir],
    ["gemini jobs", p.geminiStateDir],
    ["dsh jobs", p.dshStateDir],
    ["agent jobs", p.agentStateDir],
  ];
  const state_dirs = dirs.map(([name, path]) => {
    const problem = writableProblem(path);
    return problem ? { name, path, writable: false, error: problem } : { name, path, writable: true };
  });

  const failed_checks: string[] = [];
  for (const b of backends)
    if (!b.reachable || b.error) failed_checks.push(`backend ${b.lane}: ${b.error ?? "unreachable"}`);
  for (const d of state_dirs)
    if (!d.writable) failed_checks.push(`state dir ${d.name} (${d.path}) not writable: ${d.error}`);

  let pools: PoolStatus[] = [];
  try {
    const d = dispatchSettingsFromConfig(config);
    pools = poolStatus({ slotsDir: d.slotsDir, sizing: d.sizing });
  } catch (e) {
    failed_checks.push(`pools: ${e instanceof Error ? e.message : String(e)}`);
  }

  const jobs = jobsSummary(jobStateDirs(config.paths), sysIdentities);
  // A missing Codex CLI is information, not ill health: dl works without it.
  let codex: StatusReport["codex"];
  try {
    codex = await codexStatus(codexOptionsFromConfig(config, "dl wait"));
  } catch (e) {
    codex = { error: e instanceof Error ? e.message : String(e) };
  }
  for (const j of jobs) if (j.error) failed_checks.push(`jobs ${j.provider}: ${j.error}`);
  const gemini = await geminiStatus(geminiOptionsFromConfig(config, "dl wait"));
  failed_checks.push(...jailChecks(config, gemini.jail));

  return {
    version,
    healthy: failed_checks.length === 0,
    failed_checks,
    config: redactedConfig(config),
    backends,
    state_dirs,
    pools,
    jobs,
    codex,
    dsh: dshReport(config),
    gemini,
  };
}

/** Like Codex, a missing launcher or models file is information, not ill health. */
function dshReport(config: Config): StatusReport["dsh"] {
  try {
    return dshStatus(dshOptionsFromConfig(config, "dl wait", process.cwd()));
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

function renderDsh(d: StatusReport["dsh"]): string[] {
  if ("error" in d) return ["", "dsh:", `  unavailable: ${d.error}`];
  const m = d.models_file;
  const c = d.caps;
  return [
    "",
    "dsh:",
    `  launcher: ${d.launcher.ok ? d.launcher.path : d.launcher.message}`,
    `  models file: ${m.path}${m.exists ? "" : " (missing)"}`,
    `  enabled models: ${m.enabled.length ? m.enabled.join(", ") : "(none)"}`,
    ...m.problems.map((p) => `  problem: ${p}`),
    `  caps: ${c.max_concurrent} global / ${c.max_per_project} per project, queue ${c.max_queue}, stagger ${c.stagger_s} s`,
  ];
}

/** A jail that cannot start is ill health only where the user asked for one. */
function jailChecks(config: Config, jail: GeminiStatusReport["jail"]): string[] {
  if (jail.ok) return [];
  const why = `${jail.detail}${jail.fix ? `; fix: ${jail.fix}` : ""}`;
  const users = [
    ...(config.gemini.allowDanger ? ["Gemini jobs (DELEGATE_GEMINI_ALLOW_DANGER=1)"] : []),
    ...(config.agent.runBashSandbox ? ["run_bash (DELEGATE_RUN_BASH_SANDBOX=1)"] : []),
  ];
  return users.map((u) => `jail for ${u} cannot start: ${why}`);
}

/** The effective configuration with every secret replaced and child env shown by name only. */
function redactedConfig(c: Config): Record<string, unknown> {
  const hide = (v: string) => (v ? REDACTED : "");
  return {
    gateway: {
      ...c.gateway,
      // A key in a URL's query string or userinfo is as secret as DELEGATE_LOCAL_KEY.
      localUrl: redactUrl(c.gateway.localUrl),
      bifrostUrl: c.gateway.bifrostUrl === undefined ? undefined : redactUrl(c.gateway.bifrostUrl),
      bifrostLocalUrl: c.gateway.bifrostLocalUrl === undefined ? undefined : redactUrl(c.gateway.bifrostLocalUrl),
      vkLocal: hide(c.gateway.vkLocal),
      vkCode: hide(c.gateway.vkCode),
    },
    backend: { ...c.backend, key: hide(c.backend.key) },
    agent: c.agent,
    pools: c.pools,
    codex: c.codex,
    gemini: c.gemini,
    dsh: c.dsh,
    watcher: c.watcher,
    jobs: c.jobs,
    paths: c.paths,
    child_env_names: Object.keys(c.childEnv).sort(),
  };
}

export function renderStatus(r: StatusReport): string {
  const lines: string[] = [];
  lines.push(`dl ${r.version} — ${r.healthy ? "healthy" : "UNHEALTHY"}`);
  const cfg = r.config as { gateway: { kind: string }; backend: { model: string; codingModel: string } };
  lines.push(
    `gateway: ${cfg.gateway.kind}   default model: ${cfg.backend.model}   coding model: ${cfg.backend.codingModel}`,
  );
  lines.push("", "backends:");
  for (const b of r.backends) {
    const state = b.reachable && !b.error ? "ok" : "FAIL";
    lines.push(`  ${b.lane.padEnd(14)} ${state.padEnd(5)} ${b.url}  (${b.latency_ms} ms)`);
    if (b.error) lines.push(`    ${b.error}`);
    if (b.models.length) lines.push(`    models: ${b.models.join(", ")}`);
  }
  lines.push("", "state dirs:");
  for (const d of r.state_dirs) {
    lines.push(`  ${d.name.padEnd(20)} ${d.writable ? "ok   " : "FAIL "} ${d.path}${d.error ? `  (${d.error})` : ""}`);
  }
  lines.push("", "pools (machine-wide):");
  for (const p of r.pools) {
    const wait = p.waiting ? `, ${p.waiting} waiting` : "";
    lines.push(`  ${p.bucket.padEnd(20)} ${String(p.in_use).padStart(2)}/${p.size} in use${wait}`);
    for (const h of p.holders)
      lines.push(`    pid ${h.pid} ${h.model} since ${h.since}${h.task ? ` (${h.task})` : ""}`);
  }
  lines.push("", "jobs:");
  for (const j of r.jobs) {
    const orphans = j.orphaned ? `, ${j.orphaned} orphaned (run dl reap)` : "";
    lines.push(
      `  ${j.provider.padEnd(8)} ${j.running} running, ${j.queued} queued${orphans}${j.error ? `  (${j.error})` : ""}`,
    );
    for (const p of j.projects) lines.push(`    ${p.project}: ${p.running} running, ${p.queued} queued`);
  }
  lines.push("", "codex:");
  if ("error" in r.codex) {
    lines.push(`  unavailable: ${r.codex.error}`);
  } else {
    const c = r.codex;
    lines.push(`  cli: ${c.cli.ok ? `${c.cli.version} (${c.cli.path})` : c.cli.message}`);
    const a = c.account;
    const cool = a.state === "cooldown" ? ` until ${a.cooldown_until} (${a.cooldown_reason ?? "throttled"})` : "";
    lines.push(
      `  account: ${a.state}${cool}; caps ${a.effective_caps.global} global / ${a.effective_caps.per_project} per project${a.adaptive_cap ? ` (halved until ${a.adaptive_until})` : ""}`,
    );
    if (a.auth_hint) lines.push(`  ${a.auth_hint}`);
    if (!c.quota.windows.length) lines.push("  quota: no rate-limit reading in the session files yet");
    for (const w of c.quota.windows)
      lines.push(`  quota ${w.name}: ${w.used_percent}% used${w.resets_at ? `, resets ${w.resets_at}` : ""}`);
    for (const w of c.quota.warnings) lines.push(`  warning: ${w}`);
  }
  lines.push(...renderDsh(r.dsh));
  lines.push(...renderGemini(r.gemini));
  if (r.failed_checks.length) {
    lines.push("", "failed checks:");
    for (const f of r.failed_checks) lines.push(`  - ${f}`);
  }
  return lines.join("\n");
}

function renderGemini(g: GeminiStatusReport): string[] {
  return [
    "",
    "gemini (agy):",
    `  tools: ${g.allowed ? "allowed (DELEGATE_GEMINI_ALLOW_DANGER=1)" : "off (set DELEGATE_GEMINI_ALLOW_DANGER=1 to allow)"}`,
    `  cli: ${g.cli.ok ? g.cli.path : g.cli.message}`,
    `  jail: ${g.jail.ok ? "ok" : "UNAVAILABLE"} — ${g.jail.detail}${g.jail.fix ? `; fix: ${g.jail.fix}` : ""}`,
    `  caps: ${g.caps.max_concurrent} running, ${g.caps.max_queue} queued, one job per workdir`,
  ];
}
