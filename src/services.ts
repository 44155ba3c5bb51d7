import type { AgentSettings } from "./agent/settings.ts";
import { gatewayEndpoint, gatewaySettingsFromConfig } from "./backends/gateway.ts";
import type { Endpoint } from "./backends/types.ts";
import type { Config } from "./config.ts";
import { agentSettingsFromConfig } from "./dispatch/agent-settings.ts";
import { whoAnswered } from "./dispatch/answered.ts";
import { createDispatcher, type Dispatcher, dispatchSettingsFromConfig } from "./dispatch/pools.ts";
import type { AcquireSlot } from "./dispatch/run-delegation.ts";
import { agentOptionsFromConfig } from "./jobs/providers/agent/options.ts";
import type { AgentService } from "./jobs/providers/agent/service.ts";
import { codexOptionsFromConfig } from "./jobs/providers/codex/options.ts";
import type { CodexService } from "./jobs/providers/codex/service.ts";
import { dshOptionsFromConfig } from "./jobs/providers/dsh/options.ts";
import type { DshService } from "./jobs/providers/dsh/service.ts";
import { requireGeminiAllowed } from "./jobs/providers/gemini/gate.ts";
import { geminiOptionsFromConfig } from "./jobs/providers/gemini/options.ts";
import type { GeminiService } from "./jobs/providers/gemini/service.ts";
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
  dispatcher: Dispatcher;
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
  const dispatcher = createDispatcher(dispatchSettingsFromConfig(config));
  let codex: Promise<CodexService> | undefined;
  // Loaded on first use: a server that never runs Codex jobs never pays for the engine.
  const startCodex = () =>
    (codex ??= import("./jobs/providers/codex/service.ts").then(({ CodexService }) =>
      CodexService.start(codexOptionsFromConfig(config, waitCommandFor(process.execPath))),
    ));
  let dsh: Promise<DshService> | undefined;
  const startDsh = () =>
    (dsh ??= import("./jobs/providers/dsh/service.ts").then(({ DshService }) =>
      DshService.start(dshOptionsFromConfig(config, waitCommandFor(process.execPath), process.cwd())),
    ));
  let gemini: Promise<GeminiService> | undefined;
  const startGemini = async () => {
    requireGeminiAllowed(config.gemini.allowDanger);
    gemini ??= import("./jobs/providers/gemini/service.ts").then(({ GeminiService }) =>
      GeminiService.start(geminiOptionsFromConfig(config, waitCommandFor(process.execPath))),
    );
    return gemini;
  };
  let agent: Promise<AgentService> | undefined;
  const startAgent = () =>
    (agent ??= import("./jobs/providers/agent/service.ts").then(({ AgentService }) =>
      AgentService.start(agentOptionsFromConfig(config, waitCommandFor(process.execPath), process.cwd())),
    ));
  return {
    config,
    version,
    fetch: globalThis.fetch,
    now: () => Date.now(),
    settings: agentSettingsFromConfig(config),
    gatewayEndpoint: (model) => gatewayEndpoint(model, gateway),
    dispatcher,
    acquire: (model, o) => dispatcher.acquire(model, o),
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
