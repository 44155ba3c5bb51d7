import { delegationInput } from "../../dispatch/delegation-fields.ts";
import type { ServerDeps } from "../../services.ts";
import type { ToolDef } from "../tool-table.ts";
import cancelAgentText from "./cancel-agent.txt" with { type: "text" };
import { jobTools } from "./job-tools.ts";
import pollAgentText from "./poll-agent.txt" with { type: "text" };
import submitAgentText from "./submit-agent.txt" with { type: "text" };

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
