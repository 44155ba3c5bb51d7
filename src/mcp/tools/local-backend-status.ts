import { z } from "zod";
import { agent } from "../../jobs/providers/agent/index.ts";
import { once } from "../../once.ts";
import type { ServerDeps } from "../../services.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./local-backend-status.txt" with { type: "text" };

const Probe = once(() =>
  z.object({
    lane: z.string(),
    url: z.string(),
    reachable: z.boolean(),
    status: z.number().optional(),
    models: z.array(z.string()),
    latency_ms: z.number(),
    error: z.string().optional(),
  }),
);

export function localBackendStatusTool(deps: ServerDeps): ToolDef {
  return defineTool({
    name: "local_backend_status",
    title: "Backend status",
    description: description.trim(),
    input: () => z.object({}),
    output: () =>
      z.object({
        gateway: z.string(),
        default_model: z.string(),
        coding_model: z.string(),
        healthy: z.boolean(),
        backends: z.array(Probe()),
      }),
    annotations: { readOnlyHint: true, openWorldHint: true },
    backend: agent.facts.name,
    handler: async () => {
      const c = deps.config;
      // The probes (HTTP client, gateway lanes) load with the first call.
      const { probeBackends } = await import("../../backends/probe-targets.ts");
      const backends = await probeBackends(c, deps.fetch);
      return toolOk({
        gateway: c.gateway.kind,
        default_model: c.backend.model,
        coding_model: c.backend.codingModel,
        healthy: backends.every((b) => b.reachable && b.error === undefined),
        backends,
      });
    },
  });
}
