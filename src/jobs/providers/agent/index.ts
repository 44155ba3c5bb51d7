import { delegationInput } from "../../../dispatch/delegation-fields.ts";
import { providerEntry } from "../../../providers.ts";
import type { ProviderModule } from "../../provider-module.ts";
import cancelText from "./cancel-agent.txt" with { type: "text" };
import pollText from "./poll-agent.txt" with { type: "text" };
import type { AgentService } from "./service.ts";
import { agentSlotWait } from "./slot-wait.ts";
import { agentSpent } from "./spent.ts";
import submitText from "./submit-agent.txt" with { type: "text" };

/**
 * Background agents: each job a child `dl run` on the gateway (submit/poll/cancel_agent).
 * The gateway's own tools (delegate_to_local_agent, delegate_batch, delegate_to_provider,
 * list_local_agents, local_backend_status) count as this backend too, and are always
 * usable: the loop runs in process.
 */
export const agent = {
  facts: providerEntry("agent"),
  unusable: () => null,
  start: async (c, ctx) => (await import("./service.ts")).startJobs(c, ctx),
  tools: {
    // Checked by the schema delegate_to_local_agent uses.
    task: delegationInput,
    maxTasks: 64,
    descriptions: { submit: submitText.trim(), poll: pollText.trim(), cancel: cancelText.trim() },
  },
  slotWait: (stateDir, row, now) => agentSlotWait(stateDir, row.id, now),
  spent: (_row, jobDir) => agentSpent(jobDir),
} satisfies ProviderModule<AgentService>;
