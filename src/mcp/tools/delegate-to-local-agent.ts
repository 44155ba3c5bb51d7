import { z } from "zod";
import { agent } from "../../jobs/providers/agent/index.ts";
import type { ServerDeps } from "../../services.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import description from "./delegate-to-local-agent.txt" with { type: "text" };
import { delegationFields, delegationResultSchema } from "./delegation-schema.ts";

export function delegateToLocalAgentTool(deps: ServerDeps): ToolDef {
  return defineTool({
    name: "delegate_to_local_agent",
    title: "Delegate to an agent on another model",
    description: description.trim(),
    input: () => z.object(delegationFields()),
    output: delegationResultSchema,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: agent.facts.name,
    // As a task, the same arguments are one background agent job.
    task: {
      kind: "background",
      submit: "submit_agent",
      tasks: (args) => [args],
      answer: async (ids) => (await import("./agent-job-answer.ts")).delegationAnswer(deps, ids),
    },
    handler: async (args, call) => (await import("./delegation-run.ts")).runDelegation(deps, args, call),
  });
}
