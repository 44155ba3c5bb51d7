import type { Config } from "../config.ts";

/**
 * The gateway endpoints a health check should ask for models: the LiteLLM URL, or with
 * Bifrost each lane (code, and local when it has its own base) with its virtual key.
 */
export type ProbeTarget = { lane: string; url: string; apiKey: string; headers: Record<string, string> };

export function backendProbeTargets(c: Config): ProbeTarget[] {
  const g = c.gateway;
  if (g.kind === "litellm") {
    return [{ lane: "litellm", url: g.localUrl, apiKey: c.backend.key, headers: {} }];
  }
  const targets: ProbeTarget[] = [];
  const lane = (name: string, base: string, vk: string) => {
    const url = `${base.replace(/\/+$/, "")}/litellm/v1/messages`;
    targets.push({ lane: name, url, apiKey: c.backend.key, headers: vk ? { "x-bf-vk": vk } : {} });
  };
  lane("bifrost-code", g.bifrostUrl!, g.vkCode);
  if (g.bifrostLocalUrl) lane("bifrost-local", g.bifrostLocalUrl, g.vkLocal);
  return targets;
}
