import type { Config } from "../config.ts";
import { gatewayEndpoint, gatewaySettingsFromConfig } from "./gateway.ts";

/**
 * The gateway endpoints a health check should ask for models: the LiteLLM URL, or each
 * Bifrost lane (code, and local when it has its own base) with the same URL and key rules
 * real dispatches use, so the check proves what a delegation will meet.
 */
export type ProbeTarget = { lane: string; url: string; apiKey: string; headers: Record<string, string> };

export function backendProbeTargets(c: Config): ProbeTarget[] {
  const gw = gatewaySettingsFromConfig(c);
  // Representative aliases: the lane is chosen by prefix, the model list by the base URL.
  const samples = gw.kind === "bifrost" && gw.bifrostLocalUrl ? ["code-lane", "local-lane"] : [c.backend.model];
  return samples.map((model) => {
    const ep = gatewayEndpoint(model, gw);
    return { lane: ep.lane, url: ep.url, apiKey: ep.apiKey, headers: { ...ep.headers } };
  });
}
