import { delegationInput } from "../../dispatch/delegation-fields.ts";
import cancelAgentText from "../../jobs/providers/agent/cancel-agent.txt" with { type: "text" };
import pollAgentText from "../../jobs/providers/agent/poll-agent.txt" with { type: "text" };
import submitAgentText from "../../jobs/providers/agent/submit-agent.txt" with { type: "text" };
import type { ServerDeps } from "../../services.ts";
import type { ToolDef } from "../tool-table.ts";
import { jobTools } from "./job-tools.ts";

/** The three agent job tools: the job trio on one AgentService per server, started on first use. */
export function agentJobTools(deps: ServerDeps): ToolDef[] {
  return jobTools({
    kind: "agent",
    label: "agent",
    idPrefix: "ag-",
    // Checked by the schema delegate_to_local_agent uses.
    task: delegationInput,
    maxTasks: 64,
    descriptions: {
      submit: submitAgentText.trim(),
      poll: pollAgentText.trim(),
      cancel: cancelAgentText.trim(),
    },
    service: deps.agent,
  });
}
