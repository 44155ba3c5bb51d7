import type { ToolSpec } from "../backends/types.ts";
import type { Agent } from "./lookup.ts";

export type PromptInput = {
  agent: Agent;
  /** Absolute, already resolved workdir. */
  workdir: string;
  model: string;
  tools: ToolSpec[];
  maxTurns: number;
};

/**
 * Why this exists: delegated agents run on mid-sized models with a per-slot context
 * ceiling. Without being told, they read whole repositories and saturate it; long
 * conversations then time out. The hint steers them before that happens.
 */
export const CONTEXT_SCOPE_HINT = [
  "Keep your context small, it is limited:",
  "- If the task is large, break it into steps and finish one before starting the next.",
  "- Read only files the task needs. For big files, read a range of lines (offset/limit) instead of the whole file, and use run_bash with grep to find the part you need.",
  "- Do not re-read a file you already have unless it changed.",
  "- Start writing your answer or your changes as soon as you know enough; do not keep exploring.",
].join("\n");

/**
 * The system prompt: a routing tag (so a proxy or a log reader can tell dl traffic and
 * the agent apart), who the agent is, where it works, what tools it has, how many turns
 * it gets, the context hint, then the agent's own instructions.
 */
export function buildSystemPrompt(p: PromptInput): string {
  const { agent } = p;
  const lines: string[] = [];
  lines.push(`[dl-agent:${agent.name} source:${agent.source} model:${p.model}]`);
  lines.push("");
  const role = agent.meta.description ? ` ${agent.meta.description.trim()}` : "";
  lines.push(
    `You are the "${agent.meta.name ?? agent.name}" agent, working on a task handed to you by an orchestrating assistant.${role}`,
  );
  lines.push("");
  lines.push(`Working directory (absolute): ${p.workdir}`);
  lines.push("Relative paths are resolved against it, and file tools only reach files inside it.");
  lines.push("");
  if (p.tools.length > 0) {
    lines.push("Tools you can call:");
    for (const t of p.tools) lines.push(`- ${t.name}: ${t.description}`);
    lines.push("To do work, call a tool. Saying you will do something without calling a tool does nothing.");
  } else {
    lines.push("You have no tools in this run: answer from the task text alone.");
  }
  lines.push("");
  lines.push(
    `Turn budget: at most ${p.maxTurns} turns (one turn = one reply from you, tool calls included). ` +
      "Plan for it; you will be warned when few turns remain.",
  );
  lines.push(
    "When you are done, reply without tool calls: a short report of what you did, what you verified (with the commands you ran and their results) and anything left undone.",
  );
  lines.push("");
  lines.push(CONTEXT_SCOPE_HINT);
  if (agent.body) {
    lines.push("");
    lines.push("--- Agent instructions ---");
    lines.push(agent.body);
  }
  return lines.join("\n");
}
