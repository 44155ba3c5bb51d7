import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { delegationInput } from "../../dispatch/delegation-fields.ts";
import type { ServerDeps } from "../../services.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { boundedTotal } from "./call-size.ts";
import cancelAgentText from "./cancel-agent.txt" with { type: "text" };
import { cancelOutput, pollOutput, submitOutput } from "./job-schemas.ts";
import pollAgentText from "./poll-agent.txt" with { type: "text" };
import submitAgentText from "./submit-agent.txt" with { type: "text" };

/** These tools publish no output schema, so a refusal can carry its failure_kind as structured content. */
const STRUCTURED_ERRORS = { structuredErrors: true };

/** The submit_agent call: the task list, checked by the schema delegate_to_local_agent uses. */
const submitAgentInput = {
  tasks: boundedTotal(z.array(delegationInput).min(1).max(64)).describe("agent runs to queue"),
};

/** What submit_agent answers: ids and the watch command, in text and as structured content. */
async function submitAgentJobs(deps: ServerDeps, tasks: readonly unknown[]) {
  const svc = await deps.agent();
  const r = await svc.submit(tasks);
  const text = [`queued ${r.jobs.length} agent job(s): ${r.jobs.map((j) => j.id).join(" ")}`, r.watch_hint].join("\n");
  return toolOk({ ...r }, `${text}\n\n${JSON.stringify(r, null, 2)}`);
}

/**
 * The three agent job tools. They share one AgentService per server, started on first
 * use (it reaps jobs of dead servers on start); if its state cannot be written every tool
 * fails closed with that error and nothing runs.
 */
export function registerAgentJobTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "submit_agent",
    {
      title: "Submit background agent jobs",
      description: submitAgentText.trim(),
      inputSchema: submitAgentInput,
      outputSchema: submitOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ tasks }) => guarded(() => submitAgentJobs(deps, tasks), STRUCTURED_ERRORS),
  );

  server.registerTool(
    "poll_agent",
    {
      title: "Poll agent jobs",
      description: pollAgentText.trim(),
      inputSchema: { ids: z.array(z.string().min(1).max(64)).min(1).max(256).describe("job ids (ag-…)") },
      outputSchema: pollOutput,
      annotations: { readOnlyHint: true },
    },
    ({ ids }) =>
      guarded(async () => {
        const svc = await deps.agent();
        return toolOk({ ...svc.poll(ids) });
      }),
  );

  server.registerTool(
    "cancel_agent",
    {
      title: "Cancel an agent job",
      description: cancelAgentText.trim(),
      inputSchema: { id: z.string().min(1).max(64).describe("job id (ag-…)") },
      outputSchema: cancelOutput,
      annotations: { destructiveHint: true },
    },
    ({ id }) =>
      guarded(async () => {
        const svc = await deps.agent();
        return toolOk({ ...(await svc.cancel(id)) });
      }),
  );
}
