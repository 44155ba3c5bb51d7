import type { Surface } from "../surface.ts";
import type { DelegationResult } from "./run-delegation.ts";

/** A result whose answer the MCP edge may have cut (see mcp/result-spill.ts). */
export type RenderableResult = DelegationResult & {
  truncated?: boolean;
  final_response_length?: number;
  final_response_path?: string;
};

/**
 * The text twin of a structured result, for clients that only show text: the facts an
 * orchestrator should check first, then the agent's answer. With `previewChars` (MCP)
 * only the start of the answer is shown, with where the rest is: the text part is a
 * short rendering, not a second copy of the structured result. `dl run` shows it all.
 */
export function renderResult(r: RenderableResult, previewChars?: number, surface: Surface = "mcp"): string {
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
  if (r.cost)
    facts.push(
      `cost ${r.cost.state}${r.cost.usd !== null && r.cost.state !== "included" ? ` $${r.cost.usd.toFixed(4)}` : ""}`,
    );
  if (r.steps !== undefined) facts.push(`${r.steps} steps${r.logs ? ` (${r.logs})` : ""}`);
  const lines = [facts.join(" · ")];
  if (r.fallback_note) lines.push(`note: ${r.fallback_note}`);
  if (r.nudges) lines.push(`nudged ${r.nudges}x${r.resumed_after_nudge ? ", resumed" : ""}`);
  if (r.error) lines.push(`error: ${r.error}`);
  if (r.conversation_id) lines.push(`conversation: ${r.conversation_id} (${followUp(r.conversation_id, surface)})`);
  lines.push("", answerText(r, previewChars));
  return lines.join("\n");
}

function followUp(id: string, surface: Surface): string {
  return surface === "cli"
    ? `to follow up: dl run AGENT TASK --continue-from ${id}`
    : "pass it as continue_from with a new task to follow up";
}

function answerText(r: RenderableResult, previewChars: number | undefined): string {
  const answer = r.final_response || "(no final response)";
  const total = r.final_response_length ?? answer.length;
  if (previewChars === undefined || total <= previewChars) return answer;
  let rest = "the structured result's final_response has it all";
  if (r.truncated) {
    rest = `the structured result's final_response has the first ${answer.length}; `;
    rest += r.final_response_path ? `the whole answer is in ${r.final_response_path}` : "the rest could not be kept";
  }
  return `${answer.slice(0, previewChars)}\n\n[answer cut: ${previewChars} of ${total} characters shown here; ${rest}]`;
}
