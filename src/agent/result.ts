import { z } from "zod";
import { once } from "../once.ts";

/**
 * The one result shape every entry point returns (delegate_to_local_agent, each item of
 * delegate_batch, delegate_to_provider, `dl run --json`). The bash counters are measured
 * by dl, not reported by the model, so an orchestrator can check claims like "tests pass".
 */
export const agentResultSchema = once(() =>
  z.object({
    success: z.boolean().describe("true only if the agent finished on its own, without error"),
    final_response: z.string(),
    agent_source: z.enum(["project-agent", "project-skill", "global"]),
    model: z.string(),
    model_used: z.string(),
    turns: z.number().int(),
    stop_reason: z.string(),
    hit_turn_limit: z.boolean(),
    incomplete: z.boolean().describe("stopped before finishing (turn limit, output cut, work announced not done)"),
    nudges: z.number().int(),
    resumed_after_nudge: z.boolean(),
    bash_calls: z.number().int(),
    bash_failures: z.number().int(),
    last_bash_exit: z.number().int().nullable(),
    usage: z.object({
      input_tokens: z.number().int(),
      output_tokens: z.number().int(),
      cache_read_tokens: z.number().int(),
      cache_write_tokens: z.number().int(),
    }),
    elapsed_s: z.number(),
    error: z.string().optional().describe("what failed and what to try"),
    /** On every failed result, as on a job's: what kind of failure (TROUBLESHOOTING.md lists them). */
    failure_kind: z.string().optional(),
    /** On every failed result: dl's error code. */
    code: z.string().optional(),
    conversation_id: z.string().optional().describe("pass as continue_from to follow up"),
    // Kept short: every word here is paid for in every host's tool list.
    steps: z.number().int().optional(),
    logs: z.string().optional(),
    cost: z.object({ state: z.string(), usd: z.number().nullable() }).optional(),
  }),
);

export type AgentResult = z.infer<ReturnType<typeof agentResultSchema>>;
