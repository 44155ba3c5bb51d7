import { readFileSync } from "node:fs";
import { z } from "zod";
import { sanitizeLine } from "../../sanitize.ts";

/** Where a running agent job is: the child `dl run` keeps its latest progress line in a file. */
export type AgentProgress = { turn: number; max_turns: number; last_action: string; age_s: number };

const progressSchema = z.object({
  turn: z.number().int().nonnegative(),
  max_turns: z.number().int().nonnegative(),
  message: z.string(),
  at: z.number(),
});

/** The latest progress, or null before the first turn (or if the file is unreadable). */
export function readAgentProgress(file: string, now: number): AgentProgress | null {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return null;
  }
  const p = progressSchema.safeParse(json);
  if (!p.success) return null;
  return {
    turn: p.data.turn,
    max_turns: p.data.max_turns,
    last_action: sanitizeLine(p.data.message, 300),
    age_s: Math.max(0, Math.round((now - p.data.at) / 100) / 10),
  };
}
