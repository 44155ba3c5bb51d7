import { z } from "zod";
import { CONVERSATION_ID } from "../agent/conversation-id.ts";
import { once } from "../once.ts";

/** The fields every delegation takes, shared by the single, batch and provider tools (built on first use). */
export const delegationFields = once(() => ({
  agent_name: z.string().min(1).max(128).describe("an agent list_local_agents shows"),
  task: z.string().min(1).max(200_000).describe("what to do; name the files in scope"),
  workdir: z.string().max(4096).optional().describe("absolute project or worktree path (default: the server's folder)"),
  max_turns: z.number().int().min(0).max(40).optional().describe("turn budget (0: the default)"),
  model: z.string().max(200).optional().describe("model alias (default: the user's default model)"),
  max_tokens: z.number().int().min(1).max(1_000_000).optional().describe("output tokens per turn (default: per model)"),
  continue_from: z
    .string()
    .regex(CONVERSATION_ID, {
      error: "continue_from must be a conversation_id from an earlier result (cv- and 20 hex digits)",
    })
    .optional()
    .describe("conversation_id of a finished run (same agent, model, workdir)"),
}));

export const delegationInput = once(() => z.object(delegationFields()).strict());
export type DelegationArgs = z.infer<ReturnType<typeof delegationInput>>;
