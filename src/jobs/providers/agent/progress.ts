import { z } from "zod";
import { readChildFile, readChildFileSync } from "../../../sys/child-file.ts";
import { sanitizeLine } from "../../../sys/sanitize.ts";

/** Where a running agent job is: the child `dl run` keeps its latest progress line in a file. */
export type AgentProgress = { turn: number; max_turns: number; last_action: string; age_s: number };

const progressSchema = z.object({
  turn: z.number().int().nonnegative(),
  max_turns: z.number().int().nonnegative(),
  message: z.string(),
  at: z.number(),
});

/** One progress line is small; anything larger was not written by `dl run`. */
const PROGRESS_MAX_BYTES = 64 * 1024;

/**
 * The latest progress, or null before the first turn (or if the file is unreadable). The
 * agent's bash tool can replace the file (a FIFO, a link to /dev/zero): the bounded reader
 * then refuses it and the poll shows no progress, nothing worse.
 */
export async function readAgentProgress(file: string, now: number): Promise<AgentProgress | null> {
  const read = await readChildFile(file, { maxBytes: PROGRESS_MAX_BYTES, over: "refuse" });
  return read.ok ? parseAgentProgress(read.text, now) : null;
}

/** The same, on a synchronous path (dl status --watch): the same bounded reader's sync form. */
export function readAgentProgressSync(file: string, now: number): AgentProgress | null {
  const read = readChildFileSync(file, PROGRESS_MAX_BYTES);
  return read.ok ? parseAgentProgress(read.text, now) : null;
}

function parseAgentProgress(text: string, now: number): AgentProgress | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
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
