import { gatewayEndpoint, gatewaySettingsFromConfig } from "../backends/gateway.ts";
import type { ModelsProbe } from "../backends/models-list.ts";
import type { Config } from "../config.ts";

/** Whether the gateway lists a model dl will ask for when a call names none. */
export type ModelCheck = {
  role: "default" | "coding";
  variable: string;
  model: string;
  /** null when the gateway could not be asked (its own failed check says why). */
  served: boolean | null;
};

type LaneProbe = ModelsProbe & { lane: string };

/** A gateway may list `openai/gpt-x` for the alias `gpt-x`. */
function lists(models: readonly string[], model: string): boolean {
  return models.some((m) => m === model || m.endsWith(`/${model}`));
}

/**
 * The default and coding models against what their lane of the gateway serves. A
 * reachable gateway that does not list a model means every call that relies on the
 * default fails: ill health, named with the models that are there.
 */
export function checkModels(
  config: Config,
  backends: readonly LaneProbe[],
): { checks: ModelCheck[]; failed: string[] } {
  const gw = gatewaySettingsFromConfig(config);
  const wanted: Omit<ModelCheck, "served">[] = [
    { role: "default", variable: "DELEGATE_LOCAL_MODEL", model: config.backend.model },
  ];
  if (config.backend.codingModel !== config.backend.model)
    wanted.push({ role: "coding", variable: "DELEGATE_LOCAL_CODING_MODEL", model: config.backend.codingModel });
  const checks: ModelCheck[] = [];
  const failed: string[] = [];
  for (const w of wanted) {
    const lane = gatewayEndpoint(w.model, gw).lane;
    const probe = backends.find((b) => b.lane === lane) ?? backends[0];
    if (!probe?.reachable || probe.error) {
      checks.push({ ...w, served: null });
      continue;
    }
    const served = lists(probe.models, w.model);
    checks.push({ ...w, served });
    if (served) continue;
    const shown = probe.models.slice(0, 20).join(", ");
    const more = probe.models.length > 20 ? ` and ${probe.models.length - 20} more` : "";
    failed.push(
      `${w.role} model ${w.model} (${w.variable}) is not served by the gateway at ${probe.url}; ` +
        (probe.models.length ? `it serves: ${shown}${more}` : "it lists no models"),
    );
  }
  return { checks, failed };
}
