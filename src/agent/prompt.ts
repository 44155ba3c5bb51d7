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
  "- Read only files the task needs. For big files, find the part you need first, then read a range of lines (offset/limit) instead of the whole file.",
  "- Do not re-read a file you already have unless it changed.",
  "- Start writing your answer or your changes as soon as you know enough; do not keep exploring.",
].join("\n");

/**
 * The system prompt, ordered for prefix caches (llama.cpp, vLLM, Anthropic): they only
 * skip bytes identical to a request they have just seen, so everything that is the same
 * for every task of an agent comes first (who it is, its tools, the rules, its own
 * instructions) and what varies per run (workdir, model, turn budget, the routing tag a
 * proxy or log reader uses to tell dl traffic apart) comes last. Two tasks of one agent
 * on two worktrees and two models then share almost the whole prompt.
 */
export function buildSystemPrompt(p: PromptInput): string {
  return `${stablePart(p.agent, p.tools)}\n\n${runPart(p)}`;
}

/** What every task of this agent shares, byte for byte. */
function stablePart(agent: Agent, tools: ToolSpec[]): string {
  const role = agent.meta.description ? ` ${agent.meta.description.trim()}` : "";
  const lines = [
    `You are the "${agent.meta.name ?? agent.name}" agent, working on a task handed to you by an orchestrating assistant.${role}`,
    "",
    "Relative paths are resolved against your working directory (given at the end of these instructions), and file tools only reach files inside it.",
    "",
  ];
  if (tools.length > 0) {
    lines.push("Tools you can call:");
    for (const t of tools) lines.push(`- ${t.name}: ${t.description}`);
    lines.push(...toolAdvice(new Set(tools.map((t) => t.name))));
    lines.push("To do work, call a tool. Saying you will do something without calling a tool does nothing.");
  } else {
    lines.push("You have no tools in this run: answer from the task text alone.");
  }
  lines.push(
    "",
    "Plan for your turn budget (one turn = one reply from you, tool calls included); you will be warned when few turns remain.",
    "When you are done, reply without tool calls: a short report of what you did, what you verified (with the commands you ran and their results) and anything left undone.",
    "",
    CONTEXT_SCOPE_HINT,
  );
  if (agent.body) lines.push("", "--- Agent instructions ---", agent.body);
  return lines.join("\n");
}

/**
 * When to use which tool, for the tools this agent has (the same for every task of it, so
 * the shared prefix holds). Output tokens are a local model's slowest: an edit_file of
 * one line costs a few hundred bytes where write_file resends the whole file.
 */
function toolAdvice(has: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if (has.has("edit_file")) {
    const write = has.has("write_file") ? " Use write_file only to create a file or to replace all of it." : "";
    out.push(`To change part of an existing file, call edit_file with the exact old text and the new text.${write}`);
  }
  if (has.has("search_files")) {
    const list = has.has("list_files") ? "; list_files lists files by glob" : "";
    out.push(`To find where something is defined or used, call search_files${list}.`);
  } else if (has.has("run_bash")) {
    out.push("To find where something is defined or used, run grep with run_bash.");
  }
  return out;
}

/** What changes from run to run, kept at the very end. */
function runPart(p: PromptInput): string {
  return [
    "--- This run ---",
    `Working directory (absolute): ${p.workdir}`,
    `Turn budget: at most ${p.maxTurns} turns.`,
    `[dl-agent:${p.agent.name} source:${p.agent.source} model:${p.model}]`,
  ].join("\n");
}
