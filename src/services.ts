import type { AgentSettings } from "./agent/settings.ts";
import { gatewayEndpoint, gatewaySettingsFromConfig } from "./backends/gateway.ts";
import type { Endpoint } from "./backends/types.ts";
import type { Config } from "./config.ts";
import { agentSettingsFromConfig } from "./dispatch/agent-settings.ts";
import { whoAnswered } from "./dispatch/answered.ts";
import { parseFailoverChains } from "./dispatch/failover.ts";
import type { Dispatcher } from "./dispatch/pools.ts";
import type { AcquireSlot } from "./dispatch/run-delegation.ts";
import { DlError } from "./errors.ts";
import type { AnyJobService, ProviderModule } from "./jobs/provider-module.ts";
import { PROVIDER_MODULES } from "./jobs/providers/index.ts";
import type { JobsRole } from "./jobs/service.ts";
import { isCompiledDl, watchCommand } from "./sys/self-command.ts";
import { shellWord } from "./sys/shell-word.ts";

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
  /** Every job provider this process serves, in PROVIDERS order: PROVIDER_MODULES (tests add their own). */
  providers: readonly ProviderModule[];
  /**
   * A provider's job service, started on first use (and by `dl serve` when its store has
   * jobs). A provider whose gate refuses under this Config (Gemini without
   * DELEGATE_GEMINI_ALLOW_DANGER=1) is refused with that DlError before anything is
   * loaded or opened.
   */
  jobService: <S extends AnyJobService>(m: ProviderModule<S>) => Promise<S>;
  /** Stops job services this process started: their running jobs end, recorded. */
  stopJobs: () => Promise<void>;
};

/** The exact command a user can paste to watch jobs: this dl's own `wait`, as a person types it. */
function waitCommandFor(selfCommand: string | null): string {
  if (!isCompiledDl() && selfCommand === null) return "dl wait";
  return [...watchCommand(selfCommand), "wait"].map(shellWord).join(" ");
}

/** Whether a provider's gate lets its jobs run under this Config (Gemini: DELEGATE_GEMINI_ALLOW_DANGER). */
export function jobServiceAllowed(config: Config, m: ProviderModule): boolean {
  return !m.refusal?.(config);
}

/** Where a provider keeps its jobs: its state dir as Config.paths resolved it. */
export function stateDirOf(config: Config, m: ProviderModule): string {
  const dir = (config.paths.stateDirs as Readonly<Record<string, string>>)[m.facts.name];
  if (!dir) throw new DlError("internal", `no state dir for provider ${m.facts.name}`);
  return dir;
}

/** Throws DlError("bad_config") for a bad failover table, like any other setting. */
/**
 * `role`: how this process runs the jobs its services start (jobs/service.ts JobsRole):
 * dl serve hands them to supervisors, a supervisor adopts its one job; absent, in this
 * process.
 */
export function defaultDeps(
  config: Config,
  version: string,
  providers: readonly ProviderModule[] = PROVIDER_MODULES,
  role: JobsRole = {},
): ServerDeps {
  const gateway = gatewaySettingsFromConfig(config);
  // A bad failover table is a bad setting now; the pools themselves load on first use.
  parseFailoverChains(config.pools.failoverChains);
  let dispatcher: Promise<Dispatcher> | undefined;
  const pools = () =>
    (dispatcher ??= import("./dispatch/pools.ts").then((m) =>
      m.createDispatcher(m.dispatchSettingsFromConfig(config)),
    ));
  const started = new Map<string, Promise<AnyJobService>>();
  const jobService = <S extends AnyJobService>(m: ProviderModule<S>): Promise<S> => {
    // Refused as a rejected promise, like any other start failure, and never cached.
    const refused = m.refusal?.(config);
    if (refused) return Promise.reject(refused);
    let svc = started.get(m.facts.name);
    if (!svc) {
      const ctx = {
        stateDir: stateDirOf(config, m),
        waitCommand: waitCommandFor(config.selfCommand),
        baseDir: process.cwd(),
        engine: role,
      };
      svc = m.start(config, ctx);
      started.set(m.facts.name, svc);
    }
    return svc as Promise<S>;
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
    providers,
    jobService,
    stopJobs: async () => {
      const services = await Promise.all([...started.values()].map((s) => s.catch(() => undefined)));
      await Promise.all(services.map((svc) => svc?.stop()));
    },
  };
}
