import type { ModelsProbe } from "../backends/models-list.ts";
import { probeBackends } from "../backends/probe-targets.ts";
import type { Config } from "../config.ts";
import type { JobCaps } from "../config-tree.ts";
import { dispatchSettingsFromConfig } from "../dispatch/pools.ts";
import {
  type OtherCacheDir,
  type OtherSetting,
  otherCacheDirs,
  otherSettings,
  sharedSettings,
} from "../dispatch/server-caches.ts";
import { type PoolStatus, poolStatus } from "../dispatch/status.ts";
import { describeError } from "../errors.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import type { ProviderModule } from "../jobs/provider-module.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { type JobsSummary, jobsSummary } from "../jobs/shell/maintenance.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { type BackendVerdict, backendVerdicts } from "../mcp/tool-availability.ts";
import type { Backend } from "../mcp/tool-table.ts";
import { PROVIDERS } from "../providers.ts";
import { probeJailOnce } from "../sandbox/index.ts";
import { foreignDirProblem } from "../sys/owned.ts";
import { REDACTED, redact } from "../sys/redact.ts";
import { refuseUnsafeAncestors } from "../sys/safe-ancestors.ts";
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
export type StatusReport = StatusBase & {
  /** Each provider's part (codex, gemini, dsh), under its name: its module's status, or `{error}`. */
  readonly [provider: string]: unknown;
};

type StatusBase = {
  version: string;
  commit: string;
  target: string;
  healthy: boolean;
  failed_checks: string[];
  config: Record<string, unknown>;
  /** The settings file and where each setting's value came from (environment, file, default). */
  settings: {
    file: string;
    file_mode: string | null;
    sources: Record<string, string>;
    /** Live servers that run with another gateway or default model than this process (their host set it). */
    other_servers: OtherSetting[];
  };
  backends: (ModelsProbe & { lane: string })[];
  models: ModelCheck[];
  state_dirs: { name: string; path: string; exists: boolean; writable: boolean; error?: string }[];
  pools: PoolStatus[];
  /** Live servers whose cache dir (pool slots) is not this process's: their pools are not shared with it. */
  other_cache_dirs: (OtherCacheDir & { pools: PoolStatus[] })[];
  jobs: JobsSummary[];
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
    const problem = foreignDirProblem(path) ?? unsafeAncestorsProblem(path) ?? s.problem;
    return problem
      ? { name, path, exists: s.exists, writable: false, error: problem }
      : { name, path, exists: s.exists, writable: true };
  });
}

/** Why a folder above `dir` lets another user swap dl's state for theirs (safe-ancestors.ts), as dl would refuse it; null when none does. */
function unsafeAncestorsProblem(dir: string): string | null {
  try {
    refuseUnsafeAncestors(dir);
    return null;
  } catch (e) {
    return describeError(e);
  }
}

function pools(config: Config, failed: string[], slotsDir?: string): PoolStatus[] {
  try {
    const d = dispatchSettingsFromConfig(config);
    return poolStatus({ slotsDir: slotsDir ?? d.slotsDir, sizing: d.sizing });
  } catch (e) {
    failed.push(`pools: ${e instanceof Error ? e.message : String(e)}`);
    return [];
  }
}

/**
 * Servers on other cache dirs: their pools (what they hold is what this machine runs)
 * and a failed check naming both dirs, since neither side's limit counts the other's slots.
 */
function otherCaches(config: Config, failed: string[]): StatusReport["other_cache_dirs"] {
  const p = config.paths;
  return otherCacheDirs(p.serversRegistryDir, p.cacheDir, p.isolationRoot).map((o) => {
    const from = config.settings.sources.DELEGATE_CACHE_DIR;
    failed.push(
      `pools: dl serve (pid ${o.server_pids.join(", ")}) uses the cache dir ${o.cache_dir}, this process ${p.cacheDir} ` +
        `(DELEGATE_CACHE_DIR: ${from}); their pool slots are not shared, so the machine-wide limits do not hold. ` +
        `Set DELEGATE_CACHE_DIR in ${config.settings.file} (or nowhere) instead of in the host's config, and restart the host`,
    );
    return { ...o, pools: pools(config, failed, o.slots_dir) };
  });
}

/** One provider's part: its section, its text and what of it is ill health. */
type ProviderPart = { name: string; section: unknown; text: string[]; failed: string[] };

/**
 * A provider's part of `dl status`. One that cannot be read (a missing CLI, say) is
 * information, not ill health: dl works without it.
 */
async function providerPart(config: Config, m: ProviderModule): Promise<ProviderPart | null> {
  const name = m.facts.name;
  if (!m.status) return null;
  try {
    const s = await m.status();
    const section = await s.read(config);
    return { name, section, text: s.render(section), failed: s.failedChecks?.(section, config) ?? [] };
  } catch (e) {
    const error = describeError(e);
    return { name, section: { error }, text: ["", `${name}:`, `  unavailable: ${error}`], failed: [] };
  }
}

/** run_bash's jail (DELEGATE_RUN_BASH_SANDBOX=1): ill health when it cannot start. */
async function runBashJailCheck(config: Config): Promise<string[]> {
  if (!config.agent.runBashSandbox) return [];
  const jail = await probeJailOnce({ platform: process.platform, path: config.childEnv.PATH ?? "", cwd: "/" });
  if (jail.ok) return [];
  return [
    `jail for run_bash (DELEGATE_RUN_BASH_SANDBOX=1) cannot start: ${jail.detail}${jail.fix ? `; fix: ${jail.fix}` : ""}`,
  ];
}

/** Everything `dl status` shows: the report (its JSON) and the providers' parts as text. */
export async function gatherStatus(
  config: Config,
  build: BuildInfo,
  providers: readonly ProviderModule[] = PROVIDER_MODULES,
): Promise<{ report: StatusReport; providerText: string[] }> {
  const backends = await probeBackends(config);
  const state_dirs = stateDirs(config);
  const failed_checks: string[] = [];
  for (const b of backends)
    if (!b.reachable || b.error) failed_checks.push(`backend ${b.lane}: ${b.error ?? "unreachable"}`);
  const models = checkModels(config, backends);
  failed_checks.push(...models.failed);
  for (const d of state_dirs) if (!d.writable) failed_checks.push(`state dir ${d.name} (${d.path}): ${d.error}`);
  const poolList = pools(config, failed_checks);
  const other_cache_dirs = otherCaches(config, failed_checks);
  const jobs = jobsSummary(knownJobStores(config.paths), sysIdentities);
  for (const j of jobs) if (j.error) failed_checks.push(`jobs ${j.provider} (${j.state_dir}): ${j.error}`);
  const parts = (await Promise.all(providers.map((m) => providerPart(config, m)))).filter((p) => p !== null);
  for (const p of parts) failed_checks.push(...p.failed);
  failed_checks.push(...(await runBashJailCheck(config)));
  const report: StatusReport = {
    ...build,
    healthy: failed_checks.length === 0,
    failed_checks,
    config: snakeKeys(redactedConfig(config)) as Record<string, unknown>,
    settings: {
      file: config.settings.file,
      file_mode: config.settings.fileMode,
      sources: { ...config.settings.sources },
      other_servers: otherSettings(config.paths.serversRegistryDir, sharedSettings(config), config.paths.isolationRoot),
    },
    backends,
    models: models.checks,
    state_dirs,
    pools: poolList,
    other_cache_dirs,
    jobs,
    ...Object.fromEntries(parts.map((p) => [p.name, p.section])),
    mcp_tools: backendVerdicts(config, providers),
  };
  return { report, providerText: parts.flatMap((p) => p.text) };
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
