import type { AgentSettings } from "./agent/settings.ts";
import { gatewayEndpoint, gatewaySettingsFromConfig } from "./backends/gateway.ts";
import type { Endpoint } from "./backends/types.ts";
import type { Config } from "./config.ts";
import { agentSettingsFromConfig } from "./dispatch/agent-settings.ts";
import { whoAnswered } from "./dispatch/answered.ts";
import { parseFailoverChains } from "./dispatch/failover.ts";
import type { Dispatcher } from "./dispatch/pools.ts";
import type { AcquireSlot } from "./dispatch/run-delegation.ts";
import { requireGeminiAllowed } from "./jobs/providers/gemini/gate.ts";
import type { JobsRole } from "./jobs/service.ts";
import { PROVIDERS, type ProviderName } from "./providers.ts";
import { isCompiledDl } from "./sys/self-command.ts";

/**
 * The long-lived services one dl process builds from its Config (gateway routing, pools,
 * every provider's job service), shared by the MCP server and the CLI commands and injected so
 * tests can swap the clock, the network or the pools.
 */
export type ServerDeps = {
  config: Config;
  version: string;
  fetch: typeof fetch;
  now: () => number;
  settings: AgentSettings;
  /** Gateway endpoint for a model alias (LiteLLM, or the Bifrost lane it belongs to). */
  gatewayEndpoint: (model: string) => Endpoint;
  /** A slot of the model's machine-wide pool; the pools (flock, slot files) load on first use. */
  acquire: AcquireSlot;
  fallbackNote: (requested: string, answered: string, routing: Record<string, string>) => string | undefined;
  /**
   * Each provider's job service, started on first use (and by `dl serve` when its store
   * has jobs). Gemini's refuses (DlError) unless DELEGATE_GEMINI_ALLOW_DANGER=1, before
   * anything is opened.
   */
  jobService: <K extends ProviderName>(name: K) => Promise<JobServices[K]>;
} & {
  /** The same services by name, as the MCP tools call them (`deps.codex()`). */
  readonly [K in ProviderName]: () => Promise<JobServices[K]>;
} & {
  /** Stops job services this process started: their running jobs end, recorded. */
  stopJobs: () => Promise<void>;
};

/** The exact command a user can paste to watch jobs: this binary's own `wait`. */
function waitCommandFor(execPath: string): string {
  if (!isCompiledDl(execPath)) return "dl wait";
  return /^[\w./-]+$/.test(execPath) ? `${execPath} wait` : `'${execPath.replace(/'/g, "'\\''")}' wait`;
}

/**
 * How each provider's jobs start: its module (its `startJobs`), loaded on first use so a
 * server that never runs that provider's jobs never pays for its engine, and its `gate`,
 * which refuses (DlError) before anything is loaded or opened.
 */
const JOB_SERVICES = {
  codex: { load: () => import("./jobs/providers/codex/service.ts") },
  gemini: {
    load: () => import("./jobs/providers/gemini/service.ts"),
    gate: (c: Config) => requireGeminiAllowed(c.gemini.allowDanger),
  },
  dsh: { load: () => import("./jobs/providers/dsh/service.ts") },
  agent: { load: () => import("./jobs/providers/agent/service.ts") },
} satisfies Record<ProviderName, { load: () => Promise<unknown>; gate?: (c: Config) => void }>;

/** Each provider's job service type, as its module's `startJobs` gives it. */
type JobServices = {
  [K in ProviderName]: Awaited<ReturnType<Awaited<ReturnType<(typeof JOB_SERVICES)[K]["load"]>>["startJobs"]>>;
};
type StartJobs = (
  c: Config,
  waitCommand: string,
  baseDir: string,
  role?: JobsRole,
) => Promise<JobServices[ProviderName]>;
type JobsEntry = { load: () => Promise<{ startJobs: StartJobs }>; gate?: (c: Config) => void };

/** Whether a provider's gate lets its jobs run under this Config (Gemini: DELEGATE_GEMINI_ALLOW_DANGER). */
export function jobServiceAllowed(config: Config, name: ProviderName): boolean {
  try {
    (JOB_SERVICES[name] as JobsEntry).gate?.(config);
    return true;
  } catch {
    return false;
  }
}

/** Throws DlError("bad_config") for a bad failover table, like any other setting. */
/**
 * `role`: how this process runs the jobs its services start (jobs/service.ts JobsRole):
 * dl serve hands them to supervisors, a supervisor adopts its one job; absent, in this
 * process.
 */
export function defaultDeps(config: Config, version: string, role: JobsRole = {}): ServerDeps {
  const gateway = gatewaySettingsFromConfig(config);
  // A bad failover table is a bad setting now; the pools themselves load on first use.
  parseFailoverChains(config.pools.failoverChains);
  let dispatcher: Promise<Dispatcher> | undefined;
  const pools = () =>
    (dispatcher ??= import("./dispatch/pools.ts").then((m) =>
      m.createDispatcher(m.dispatchSettingsFromConfig(config)),
    ));
  const started = new Map<ProviderName, Promise<JobServices[ProviderName]>>();
  const jobService = <K extends ProviderName>(name: K): Promise<JobServices[K]> => {
    const entry = JOB_SERVICES[name] as JobsEntry;
    // Refused as a rejected promise, like any other start failure, and never cached.
    try {
      entry.gate?.(config);
    } catch (e) {
      return Promise.reject(e);
    }
    let svc = started.get(name);
    if (!svc) {
      const wait = waitCommandFor(process.execPath);
      svc = entry.load().then((m) => m.startJobs(config, wait, process.cwd(), role));
      started.set(name, svc);
    }
    return svc as Promise<JobServices[K]>;
  };
  const byName = Object.fromEntries(PROVIDERS.map((p) => [p.name, () => jobService(p.name)])) as {
    [K in ProviderName]: () => Promise<JobServices[K]>;
  };
  return {
    config,
    version,
    fetch: globalThis.fetch,
    now: () => Date.now(),
    settings: agentSettingsFromConfig(config),
    gatewayEndpoint: (model) => gatewayEndpoint(model, gateway),
    acquire: async (model, o) => (await pools()).acquire(model, o),
    fallbackNote: (requested, answered, routing) => whoAnswered(requested, { model: answered, routing }).fallback_note,
    jobService,
    ...byName,
    stopJobs: async () => {
      const services = await Promise.all([...started.values()].map((s) => s.catch(() => undefined)));
      await Promise.all(services.map((svc) => svc?.stop()));
    },
  };
}
