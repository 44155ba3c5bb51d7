import { z } from "zod";
import { once } from "../once.ts";

/** The fields every delegation takes, shared by the single, batch and provider tools (built on first use). */
export const delegationFields = once(() => ({
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
}));

export const delegationInput = once(() => z.object(delegationFields()).strict());
export type DelegationArgs = z.infer<ReturnType<typeof delegationInput>>;
