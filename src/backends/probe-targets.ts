import type { Config } from "../config.ts";
import { gatewayEndpoint, gatewaySettingsFromConfig } from "./gateway.ts";
import { type ModelsProbe, probeModels } from "./models-list.ts";

/**
 * The gateway endpoints a health check should ask for models: the LiteLLM URL, or each
 * Bifrost lane (code, and local when it has its own base) with the same URL and key rules
 * real dispatches use, so the check proves what a delegation will meet.
 */
type ProbeTarget = { lane: string; url: string; apiKey: string; headers: Record<string, string> };

function backendProbeTargets(c: Config): ProbeTarget[] {
  const gw = gatewaySettingsFromConfig(c);
  // Representative aliases: the lane is chosen by prefix, the model list by the base URL.
  const samples = gw.kind === "bifrost" && gw.bifrostLocalUrl ? ["code-lane", "local-lane"] : [c.backend.model];
  return samples.map((model) => {
    const ep = gatewayEndpoint(model, gw);
    return { lane: ep.lane, url: ep.url, apiKey: ep.apiKey, headers: { ...ep.headers } };
  });
}

/** How long a health check waits for one endpoint's model list. */
const PROBE_TIMEOUT_MS = 3000;

/**
 * Every probe target asked for its models at once: what `dl status`, `dl serve --check`
 * and local_backend_status report. `fetch` is injected by tests and the MCP server.
 */
export function probeBackends(c: Config, fetch?: typeof globalThis.fetch): Promise<(ModelsProbe & { lane: string })[]> {
  return Promise.all(
    backendProbeTargets(c).map(async (t) => {
      const p = await probeModels({
        endpointUrl: t.url,
        apiKey: t.apiKey,
        headers: t.headers,
        timeoutMs: PROBE_TIMEOUT_MS,
        fetch,
      });
      // A reader looks a model up by name here; dl init keeps the server's own order.
      return { lane: t.lane, ...p, models: [...p.models].sort() };
    }),
  );
}
