import { z } from "zod";
import { CONVERSATION_ID } from "../agent/conversation-id.ts";
import { builtOnce, lazySchema } from "../lazy-schema.ts";

/** The fields every delegation takes, shared by the single, batch and provider tools (built on first use). */
export const delegationFields = builtOnce(() => ({
  agent_name: z
    .string()
    .min(1)
    .max(128)
    .describe(
      "agent to run: <workdir>/.claude/agents/<name>.md, then .claude/skills/<name>/SKILL.md, then the global agents dir",
    ),
  task: z.string().min(1).max(200_000).describe("what the agent should do; name the files in scope"),
  workdir: z
    .string()
    .max(4096)
    .optional()
    .describe("absolute path of the project or worktree the agent works in (default: the server's directory)"),
  max_turns: z.number().int().min(0).max(40).optional().describe("turn budget; omit or 0 for auto (25), hard cap 40"),
  model: z
    .string()
    .max(200)
    .optional()
    .describe("model alias; default DELEGATE_LOCAL_MODEL (coding agents: DELEGATE_LOCAL_CODING_MODEL)"),
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe("output budget per turn; default 65536 (150000 for reasoning tiers)"),
  continue_from: z
    .string()
    .regex(CONVERSATION_ID, {
      error: "continue_from must be a conversation_id from an earlier result (cv- and 20 hex digits)",
    })
    .optional()
    .describe(
      "an earlier result's conversation_id: continue that finished delegation with this task (same agent, model, workdir)",
    ),
}));

export const delegationInput = lazySchema(() => z.object(delegationFields()).strict());
export type DelegationArgs = z.infer<typeof delegationInput>;
