import type { AgentSettings } from "./agent/settings.ts";
import { gatewayEndpoint, gatewaySettingsFromConfig } from "./backends/gateway.ts";
import type { Endpoint } from "./backends/types.ts";
import type { Config } from "./config.ts";
import { agentSettingsFromConfig } from "./dispatch/agent-settings.ts";
import { whoAnswered } from "./dispatch/answered.ts";
import { parseFailoverChains } from "./dispatch/failover.ts";
import type { Dispatcher } from "./dispatch/pools.ts";
import type { AcquireSlot } from "./dispatch/run-delegation.ts";
import type { AgentService } from "./jobs/providers/agent.ts";
import type { CodexService } from "./jobs/providers/codex.ts";
import type { DshService } from "./jobs/providers/dsh.ts";
import type { GeminiService } from "./jobs/providers/gemini.ts";
import { requireGeminiAllowed } from "./jobs/providers/gemini-gate.ts";
import { isCompiledDl } from "./sys/self-command.ts";

/**
 * The long-lived services one dl process builds from its Config (gateway routing, pools,
 * the Codex job service), shared by the MCP server and the CLI commands and injected so
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
  /** The Codex job service, started on first use (and by `dl serve` at start-up). */
  codex: () => Promise<CodexService>;
  /** The dsh launcher job service, started on first use (and by `dl serve` when it has jobs). */
  dsh: () => Promise<DshService>;
  /**
   * The Gemini job service, started on first use; refuses (DlError) unless
   * DELEGATE_GEMINI_ALLOW_DANGER=1, before anything is opened.
   */
  gemini: () => Promise<GeminiService>;
  /** The background agent job service (each job a child `dl run`), started on first use. */
  agent: () => Promise<AgentService>;
  /** Stops job services this process started: their running jobs end, recorded. */
  stopJobs: () => Promise<void>;
};

/** The exact command a user can paste to watch jobs: this binary's own `wait`. */
function waitCommandFor(execPath: string): string {
  if (!isCompiledDl(execPath)) return "dl wait";
  return /^[\w./-]+$/.test(execPath) ? `${execPath} wait` : `'${execPath.replace(/'/g, "'\\''")}' wait`;
}

/** Throws DlError("bad_config") for a bad failover table, like any other setting. */
export function defaultDeps(config: Config, version: string): ServerDeps {
  const gateway = gatewaySettingsFromConfig(config);
  // A bad failover table is a bad setting now; the pools themselves load on first use.
  parseFailoverChains(config.pools.failoverChains);
  let dispatcher: Promise<Dispatcher> | undefined;
  const pools = () =>
    (dispatcher ??= import("./dispatch/pools.ts").then((m) =>
      m.createDispatcher(m.dispatchSettingsFromConfig(config)),
    ));
  const wait = waitCommandFor(process.execPath);
  // Each job service (and its options: workdir guard, jail probe) loads on first use: a
  // server that never runs Codex jobs never pays for the engine.
  let codex: Promise<CodexService> | undefined;
  const startCodex = () =>
    (codex ??= Promise.all([import("./jobs/providers/codex.ts"), import("./jobs/providers/codex-options.ts")]).then(
      ([{ CodexService }, { codexOptionsFromConfig }]) => CodexService.start(codexOptionsFromConfig(config, wait)),
    ));
  let dsh: Promise<DshService> | undefined;
  const startDsh = () =>
    (dsh ??= Promise.all([import("./jobs/providers/dsh.ts"), import("./jobs/providers/dsh-options.ts")]).then(
      ([{ DshService }, { dshOptionsFromConfig }]) =>
        DshService.start(dshOptionsFromConfig(config, wait, process.cwd())),
    ));
  let gemini: Promise<GeminiService> | undefined;
  const startGemini = async () => {
    requireGeminiAllowed(config.gemini.allowDanger);
    gemini ??= Promise.all([import("./jobs/providers/gemini.ts"), import("./jobs/providers/gemini-options.ts")]).then(
      ([{ GeminiService }, { geminiOptionsFromConfig }]) => GeminiService.start(geminiOptionsFromConfig(config, wait)),
    );
    return gemini;
  };
  let agent: Promise<AgentService> | undefined;
  const startAgent = () =>
    (agent ??= Promise.all([import("./jobs/providers/agent.ts"), import("./jobs/providers/agent-options.ts")]).then(
      ([{ AgentService }, { agentOptionsFromConfig }]) =>
        AgentService.start(agentOptionsFromConfig(config, wait, process.cwd())),
    ));
  return {
    config,
    version,
    fetch: globalThis.fetch,
    now: () => Date.now(),
    settings: agentSettingsFromConfig(config),
    gatewayEndpoint: (model) => gatewayEndpoint(model, gateway),
    acquire: async (model, o) => (await pools()).acquire(model, o),
    fallbackNote: (requested, answered, routing) => whoAnswered(requested, { model: answered, routing }).fallback_note,
    codex: startCodex,
    dsh: startDsh,
    gemini: startGemini,
    agent: startAgent,
    stopJobs: async () => {
      const started = [codex, dsh, gemini, agent].filter((s) => s !== undefined);
      const services = await Promise.all(started.map((s) => s.catch(() => undefined)));
      await Promise.all(services.map((svc) => svc?.stop()));
    },
  };
}
