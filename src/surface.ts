/**
 * Where a message will be read. The same failure reaches a model through an MCP tool
 * result and a person through `dl run`; each must be pointed at what it can use: tool
 * and parameter names for the model, commands and flags for the person. Layers below the
 * edges take a Surface and pick their words here; the edge says which one it is.
 */
export type Surface = "mcp" | "cli";

type Words = {
  /** The turn-budget knob. */
  maxTurns: string;
  /** The output-budget knob. */
  maxTokens: string;
  /** How to check the gateway and the models it serves. */
  checkBackend: string;
  /** What to do when an agent is not found, after the list of places searched. */
  agentHelp: string;
  /** The follow-up knob. */
  continueFrom: string;
};

const WORDS: Record<Surface, Words> = {
  mcp: {
    maxTurns: "max_turns",
    maxTokens: "max_tokens",
    checkBackend: "call local_backend_status",
    agentHelp: "Create one of these files, or call list_local_agents to see the available agents.",
    continueFrom: "continue_from",
  },
  cli: {
    maxTurns: "--max-turns",
    maxTokens: "--max-tokens",
    checkBackend: "run `dl status`",
    agentHelp: "Create one of these files (the name is the file name without .md), or check the spelling.",
    continueFrom: "--continue-from",
  },
};

export function wordsFor(surface: Surface = "mcp"): Words {
  return WORDS[surface];
}
