import { z } from "zod";
import { delegationOutcomeSchema } from "../../dispatch/delegation-result.ts";
import { once } from "../../once.ts";

// The input shape lives in dispatch/ so the agent job provider (jobs/) validates with it too.
export { type DelegationArgs, delegationFields, delegationInput } from "../../dispatch/delegation-fields.ts";

export const delegationResultSchema = once(() =>
  delegationOutcomeSchema().extend({
    truncated: z.boolean().optional().describe("final_response was cut to fit the reply; see final_response_path"),
    final_response_length: z.number().int().optional().describe("characters in the whole answer, when truncated"),
    final_response_path: z.string().optional().describe("private file holding the whole answer, when truncated"),
  }),
);

/** MCP treats 0 as "auto" the way the predecessor did. */
export function normalizeTurns(n: number | undefined): number | undefined {
  return n === undefined || n === 0 ? undefined : n;
}
