import type { DelegationResult } from "./run-delegation.ts";

/**
 * The text twin of a structured result, for clients that only show text: the facts an
 * orchestrator should check first, then the agent's answer.
 */
export function renderResult(r: DelegationResult): string {
  const facts = [
    r.success ? "success" : "FAILED",
    `model ${r.model_used}${r.failed_over_from ? ` (failed over from ${r.failed_over_from})` : ""}`,
    `agent from ${r.agent_source}`,
    `${r.turns} turns${r.hit_turn_limit ? " (turn limit hit)" : ""}`,
    `stop ${r.stop_reason}`,
    `bash ${r.bash_calls} calls, ${r.bash_failures} failed, last exit ${r.last_bash_exit ?? "-"}`,
    `${r.usage.input_tokens} in / ${r.usage.output_tokens} out tokens (cache read ${r.usage.cache_read_tokens}, write ${r.usage.cache_write_tokens})`,
    `${r.elapsed_s} s`,
  ];
  const lines = [facts.join(" · ")];
  if (r.fallback_note) lines.push(`note: ${r.fallback_note}`);
  if (r.nudges) lines.push(`nudged ${r.nudges}x${r.resumed_after_nudge ? ", resumed" : ""}`);
  if (r.error) lines.push(`error: ${r.error}`);
  lines.push("", r.final_response || "(no final response)");
  return lines.join("\n");
}
