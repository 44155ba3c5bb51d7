import { z } from "zod";
import { type ProviderTarget, providerOverrides } from "../../dispatch/provider-endpoint.ts";
import { agent } from "../../jobs/providers/agent/index.ts";
import type { ServerDeps } from "../../services.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./delegate-to-provider.txt" with { type: "text" };
import { delegationFields, sameAsLocalAgentResult } from "./delegation-schema.ts";
import { submittedResult } from "./job-tools.ts";

const input = () =>
  z.object({
    provider_url: z.string().min(1).max(2048).describe("http(s) base or endpoint URL of the provider"),
    api_key: z.string().max(4096).describe("the provider's key (never echoed)"),
    format: z.enum(["anthropic", "openai"]).optional().describe("force the wire format; default by model prefix"),
    ...delegationFields(),
    model: z.string().min(1).max(200).describe("the provider's model name"),
  });
type Args = z.output<ReturnType<typeof input>>;

/** The endpoint half of the arguments, and the delegation half. */
function split(args: Args): { target: ProviderTarget; rest: Omit<Args, "provider_url" | "api_key" | "format"> } {
  const { provider_url, api_key, format, ...rest } = args;
  return { target: { url: provider_url, apiKey: api_key, format }, rest };
}

export function delegateToProviderTool(deps: ServerDeps): ToolDef {
  const allowHosts = deps.config.backend.providerAllowHosts;
  return defineTool({
    name: "delegate_to_provider",
    title: "Delegate to an agent on any endpoint",
    description: description.trim(),
    input,
    output: sameAsLocalAgentResult,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: agent.facts.name,
    // As a task, one background agent job whose child talks to this endpoint. The key
    // stays in this server's memory until the launch hands it to the child's environment.
    task: {
      kind: "queue",
      queue: async (args) => {
        const { target, rest } = split(args);
        await providerOverrides(target, allowHosts); // an unsafe URL is refused now, not in the job
        const jobs = await deps.jobService(agent);
        return submittedResult(agent.facts.label, await jobs.submitToProvider(rest, target));
      },
      answer: async (ids) => (await import("./agent-job-answer.ts")).delegationAnswer(deps, ids),
    },
    handler: async (args, call) => {
      const { target, rest } = split(args);
      const endpoint = await providerOverrides(target, allowHosts);
      return (await import("./delegation-run.ts")).runDelegation(deps, rest, call, endpoint, "delegate_to_provider");
    },
  });
}
