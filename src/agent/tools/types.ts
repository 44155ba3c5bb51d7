import type { ToolSpec } from "../../backends/types.ts";

/** What every tool call gets: where it runs and how to stop it. */
export type ToolContext = {
  /** realpath of the workdir. */
  workdir: string;
  /** DELEGATE_ALLOW_PATH_ESCAPE: skip confinement (the user trusts the agent). */
  allowEscape: boolean;
  signal: AbortSignal;
};

export type ToolOutcome = {
  /** Text the model sees as the tool_result. */
  content: string;
  is_error: boolean;
  /** Set by run_bash only: what the server measured, not what the model claims. */
  bash?: { exitCode: number | null; timedOut: boolean };
};

export type AgentTool = {
  spec: ToolSpec;
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
};

export const ok = (content: string): ToolOutcome => ({ content, is_error: false });
export const fail = (content: string): ToolOutcome => ({ content, is_error: true });

/** Optional integer argument; models send numbers as strings often enough to accept both. */
export function intArg(v: unknown, name: string, min: number): number | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  const n = typeof v === "string" ? Number(v.trim()) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min) {
    throw new Error(`${name} must be an integer >= ${min}`);
  }
  return n;
}
