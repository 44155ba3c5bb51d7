import { endpointFor } from "../backends/route.ts";
import type { Endpoint } from "../backends/types.ts";
import { knowSecrets, urlSecretsOf } from "../sys/redact.ts";

/** A named endpoint a delegation talks to instead of the gateway (delegate_to_provider). */
export interface ProviderTarget {
  url: string;
  apiKey: string;
  format?: "anthropic" | "openai" | undefined;
}

/** The endpoint a job's child `dl run` was handed (DELEGATE_RUN_PROVIDER_*), or null for the gateway. */
export function runProviderTarget(r: {
  readonly url?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly format: "auto" | "anthropic" | "openai";
}): ProviderTarget | null {
  if (!r.url) return null;
  return { url: r.url, apiKey: r.apiKey ?? "", format: r.format === "auto" ? undefined : r.format };
}

/**
 * The delegation-context overrides for a named endpoint: its URL once it has passed the
 * SSRF guard, its key, and no failover (a fallback would send the work elsewhere). The
 * guard runs wherever the call is made, in the server and again in a job's child. The
 * key (and any credential in the URL) is a secret from here on, before anything about
 * the call is stored or said: a task or a refusal that repeats it is cut.
 */
export async function providerOverrides(
  t: ProviderTarget,
  allowHosts: readonly string[],
): Promise<{ endpointFor: (model: string) => Endpoint; failover: false }> {
  knowSecrets([t.apiKey, ...urlSecretsOf(t.url)]);
  // The SSRF guard (node:net, node:dns, the address tables) loads with the first call.
  const { guardProviderUrl } = await import("../backends/ssrf.ts");
  const url = await guardProviderUrl(t.url, { allowHosts });
  return {
    endpointFor: (model) =>
      endpointFor({ baseUrl: url.toString(), apiKey: t.apiKey, model, ...(t.format ? { format: t.format } : {}) }),
    failover: false,
  };
}
