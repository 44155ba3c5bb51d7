import { z } from "zod";
import { endpointFor } from "../../backends/route.ts";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import { prepareDelegation, runPrepared } from "../../dispatch/run-delegation.ts";
import type { ServerDeps } from "../../services.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import { boundResult } from "../result-spill.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./delegate-to-provider.txt" with { type: "text" };
import { delegationFields, delegationResultSchema, normalizeTurns } from "./delegation-schema.ts";

export function delegateToProviderTool(deps: ServerDeps): ToolDef {
  return defineTool({
    name: "delegate_to_provider",
    title: "Delegate to an agent on any endpoint",
    description: description.trim(),
    input: () =>
      z.object({
        provider_url: z.string().min(1).max(2048).describe("http(s) base or endpoint URL of the provider"),
        api_key: z.string().max(4096).describe("the provider's key (never echoed)"),
        format: z.enum(["anthropic", "openai"]).optional().describe("force the wire format; default by model prefix"),
        ...delegationFields(),
        model: z.string().min(1).max(200).describe("the provider's model name"),
      }),
    output: delegationResultSchema,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: "agent",
    handler: (args, call) =>
      guarded(async () => {
        // The SSRF guard (node:net, node:dns, the address tables) loads with the first call.
        const { guardProviderUrl } = await import("../../backends/ssrf.ts");
        const url = await guardProviderUrl(args.provider_url, { allowHosts: deps.config.backend.providerAllowHosts });
        const { provider_url: _url, api_key, format, ...rest } = args;
        const prepared = await prepareDelegation(
          { ...rest, max_turns: normalizeTurns(rest.max_turns) },
          deps.config,
          deps.settings,
        );
        const progress = call.progress;
        const result = await runPrepared(
          prepared,
          delegationContext(deps, {
            signal: call.signal,
            onProgress: progress,
            endpointFor: (model) =>
              endpointFor({ baseUrl: url.toString(), apiKey: api_key, model, ...(format ? { format } : {}) }),
            failover: false,
          }),
        );
        const bounded = await boundResult(result, deps.config.paths.cacheDir);
        await progress.settle();
        return toolOk(bounded, renderResult(bounded, TEXT_ANSWER_PREVIEW_CHARS));
      }),
  });
}
