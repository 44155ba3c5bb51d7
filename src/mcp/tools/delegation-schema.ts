import { z } from "zod";
import { delegationOutcomeSchema } from "../../dispatch/delegation-result.ts";
import { once } from "../../once.ts";

// The input shape lives in dispatch/ so the agent job provider (jobs/) validates with it too.
export { type DelegationArgs, delegationFields, delegationInput } from "../../dispatch/delegation-fields.ts";

export const delegationResultSchema = once(() =>
  delegationOutcomeSchema().extend({
    truncated: z.boolean().optional().describe("final_response was cut; the whole is at final_response_path"),
    final_response_length: z.number().int().optional(),
    final_response_path: z.string().optional(),
  }),
);

/**
 * A result of the same shape as delegate_to_local_agent's, named instead of repeated:
 * every host pays for each schema in every session, and delegate_batch's items and
 * delegate_to_provider's answer are that tool's result field for field.
 */
export const sameAsLocalAgentResult = once(() =>
  z.object({ success: z.boolean() }).loose().describe("the fields delegate_to_local_agent returns"),
);

/** MCP treats 0 as "auto" the way the predecessor did. */
export function normalizeTurns(n: number | undefined): number | undefined {
  return n === undefined || n === 0 ? undefined : n;
}
