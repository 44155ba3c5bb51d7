import { z } from "zod";
import { agentResultSchema } from "../agent/result.ts";
import { once } from "../once.ts";

/**
 * A delegation's result as every entry point returns it (delegate_to_local_agent, each
 * delegate_batch item, delegate_to_provider, `dl run --json`, and so the result an agent
 * job's child prints): the loop's result plus who answered. The MCP edge adds the fields
 * of an answer it cut (mcp/tools/delegation-schema.ts).
 */
export const delegationOutcomeSchema = once(() =>
  agentResultSchema().extend({
    failed_over_from: z.string().optional().describe("the model asked for, when an equivalent one ran"),
    fallback_note: z.string().optional(),
  }),
);
