import type { ModelsProbe } from "../backends/models-list.ts";
import { probeBackends } from "../backends/probe-targets.ts";
import type { Config } from "../config.ts";
import { dispatchSettingsFromConfig } from "../dispatch/pools.ts";
import { type PoolStatus, poolStatus } from "../dispatch/status.ts";
import type { JobCaps } from "../jobs/engine/caps.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { codexServiceOptions } from "../jobs/providers/codex/service.ts";
import { type CodexStatusReport, codexStatus } from "../jobs/providers/codex/status.ts";
import { dshServiceOptions } from "../jobs/providers/dsh/service.ts";
import { type DshStatusReport, dshStatus } from "../jobs/providers/dsh/status.ts";
import { geminiServiceOptions } from "../jobs/providers/gemini/service.ts";
import { type GeminiStatusReport, geminiStatus } from "../jobs/providers/gemini/status.ts";
import { type JobsSummary, jobsSummary } from "../jobs/shell/maintenance.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { type BackendVerdict, backendVerdicts } from "../mcp/tool-availability.ts";
import type { Backend } from "../mcp/tool-table.ts";
import { PROVIDERS } from "../providers.ts";
import { REDACTED, redact } from "../sys/redact.ts";
import { dirState } from "../sys/writable.ts";
import type { BuildInfo } from "../version.ts";
import { checkModels, type ModelCheck } from "./status-models.ts";

/**
 * Everything `dl status` reports, gathered once and rendered as text or JSON. Each check
 * says whether it passed; the command's exit code is derived from them. Gathering creates
 * nothing: a state dir that does not exist yet is reported as such (dl creates it on first
 * use), and only stores that already exist are opened. Keys are snake_case throughout, as
 * in the MCP results.
 */
export type StatusReport = {
  version: string;
  commit: string;
  target: string;
  healthy: boolean;
  failed_checks: string[];
  config: Record<string, unknown>;
  backends: (ModelsProbe & { lane: string })[];
  models: ModelCheck[];
  state_dirs: { name: string; path: string; exists: boolean; writable: boolean; error?: string }[];
  pools: PoolStatus[];
  jobs: JobsSummary[];
  codex: CodexStatusReport | { error: string };
  dsh: DshStatusReport | { error: string };
  gemini: GeminiStatusReport;
  /** Which backends' tools `dl serve` lists in tools/list, and why the others are not. */
  mcp_tools: Record<Backend, BackendVerdict>;
};

/** Every dir dl writes, named as `dl status` and `dl serve --check` show it: the pool cache, then each provider's jobs. */
export function namedStateDirs(config: Config): [name: string, path: string][] {
  const p = config.paths;
  return [
    ["cache (pool slots)", p.cacheDir],
    ...PROVIDERS.map((d): [string, string] => [`${d.name} jobs`, p.stateDirs[d.name]]),
  ];
}

function stateDirs(config: Config): StatusReport["state_dirs"] {
  return namedStateDirs(config).map(([name, path]) => {
    const s = dirState(path);
    return s.problem
      ? { name, path, exists: s.exists, writable: false, error: s.problem }
      : { name, path, exists: s.exists, writable: true };
  });
}

function pools(config: Config, failed: string[]): PoolStatus[] {
  try {
    const d = dispatchSettingsFromConfig(config);
    return poolStatus({ slotsDir: d.slotsDir, sizing: d.sizing });
  } catch (e) {
    failed.push(`pools: ${e instanceof Error ? e.message : String(e)}`);
    return [];
  }
}

/** A missing Codex CLI is information, not ill health: dl works without it. */
async function codexReport(config: Config): Promise<StatusReport["codex"]> {
  try {
    return await codexStatus(codexServiceOptions(config, "dl wait"));
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** Like Codex, a missing launcher or models file is information, not ill health. */
function dshReport(config: Config): StatusReport["dsh"] {
  try {
    return dshStatus(dshServiceOptions(config, "dl wait", process.cwd()));
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

export async function gatherStatus(config: Config, build: BuildInfo): Promise<StatusReport> {
  const backends = await probeBackends(config);
  const state_dirs = stateDirs(config);
  const failed_checks: string[] = [];
  for (const b of backends)
    if (!b.reachable || b.error) failed_checks.push(`backend ${b.lane}: ${b.error ?? "unreachable"}`);
  const models = checkModels(config, backends);
  failed_checks.push(...models.failed);
  for (const d of state_dirs) if (!d.writable) failed_checks.push(`state dir ${d.name} (${d.path}): ${d.error}`);
  const poolList = pools(config, failed_checks);
  const jobs = jobsSummary(knownJobStores(config.paths), sysIdentities);
  for (const j of jobs) if (j.error) failed_checks.push(`jobs ${j.provider}: ${j.error}`);
  const codex = await codexReport(config);
  const gemini = await geminiStatus(geminiServiceOptions(config, "dl wait"));
  failed_checks.push(...jailChecks(config, gemini.jail));
  return {
    ...build,
    healthy: failed_checks.length === 0,
    failed_checks,
    config: snakeKeys(redactedConfig(config)) as Record<string, unknown>,
    backends,
    models: models.checks,
    state_dirs,
    pools: poolList,
    jobs,
    codex,
    dsh: dshReport(config),
    gemini,
    mcp_tools: backendVerdicts(config),
  };
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

/** A provider's settings as status shows them: the caps group's values inline, where the group is. */
function inlineCaps(
  section: { readonly caps: Readonly<JobCaps> },
  shown: readonly (keyof JobCaps)[] = ["maxConcurrent", "maxPerProject", "maxQueue", "staggerS"],
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(section).flatMap(([k, v]): [string, unknown][] =>
      k === "caps" ? shown.map((cap) => [cap, section.caps[cap]]) : [[k, v]],
    ),
  );
}

/** The state paths as status has always shown them: each provider's job store as `<name>StateDir`. */
function shownPaths(p: Config["paths"]): Record<string, unknown> {
  const { stateDirs, jobStores: _, codexHome, dshModelsFile, isolationRoot, ...dirs } = p;
  const stores = Object.fromEntries(PROVIDERS.map((d) => [`${d.name}StateDir`, stateDirs[d.name]]));
  return { ...dirs, ...stores, codexHome, dshModelsFile, isolationRoot };
}

/** The effective configuration with every secret replaced and child env shown by name only. */
function redactedConfig(c: Config): Record<string, unknown> {
  const hide = (v: string) => (v ? REDACTED : "");
  return {
    gateway: {
      ...c.gateway,
      // A key in a URL's query string or userinfo is as secret as DELEGATE_LOCAL_KEY.
      localUrl: redact(c.gateway.localUrl),
      bifrostUrl: c.gateway.bifrostUrl === undefined ? undefined : redact(c.gateway.bifrostUrl),
      bifrostLocalUrl: c.gateway.bifrostLocalUrl === undefined ? undefined : redact(c.gateway.bifrostLocalUrl),
      vkLocal: hide(c.gateway.vkLocal),
      vkCode: hide(c.gateway.vkCode),
    },
    backend: {
      ...c.backend,
      key: hide(c.backend.key),
      runProvider: {
        ...c.backend.runProvider,
        url: c.backend.runProvider.url === undefined ? undefined : redact(c.backend.runProvider.url),
        apiKey: hide(c.backend.runProvider.apiKey ?? ""),
      },
    },
    agent: c.agent,
    pools: c.pools,
    codex: inlineCaps(c.codex),
    // Gemini has no per-project cap or stagger variable: none is shown.
    gemini: inlineCaps(c.gemini, ["maxConcurrent", "maxQueue"]),
    dsh: inlineCaps(c.dsh),
    watcher: c.watcher,
    jobs: c.jobs,
    paths: shownPaths(c.paths),
    child_env_names: Object.keys(c.childEnv).sort(),
  };
}

/**
 * Config field names as JSON keys: `codingModel` → `coding_model`. Only the camelCase
 * humps change, so data keys (pool buckets like `glm-coding-plan`, variable names) keep
 * their spelling.
 */
export function snakeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [
      k.replace(/([a-z0-9])([A-Z])/g, (_, a, b) => `${a}_${b.toLowerCase()}`),
      snakeKeys(x),
    ]),
  );
}
