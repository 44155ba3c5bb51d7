import type { Config } from "../config.ts";
import type { AgentSettings } from "../agent/settings.ts";
import { endpointFor } from "../backends/route.ts";
import type { Endpoint } from "../backends/types.ts";
import { agentSettingsFromConfig } from "../dispatch/agent-settings.ts";
import type { AcquireSlot } from "../dispatch/run-delegation.ts";

/**
 * What the MCP layer needs from the outside world, injected so tests can swap the clock,
 * the network or the pools without patching globals.
 */
export type ServerDeps = {
  config: Config;
  version: string;
  fetch: typeof fetch;
  now: () => number;
  settings: AgentSettings;
  /** Gateway endpoint for a model alias. */
  gatewayEndpoint: (model: string) => Endpoint;
  acquire: AcquireSlot;
  fallbackNote: (requested: string, answered: string, routing: Record<string, string>) => string | undefined;
};

export function defaultDeps(config: Config, version: string): ServerDeps {
  return {
    config,
    version,
    fetch: globalThis.fetch,
    now: () => Date.now(),
    settings: agentSettingsFromConfig(config),
    gatewayEndpoint: (model) => endpointFor({ baseUrl: config.gateway.localUrl, apiKey: config.backend.key, model }),
    acquire: async (model) => ({ model_used: model, release: () => {} }),
    fallbackNote: () => undefined,
  };
}
