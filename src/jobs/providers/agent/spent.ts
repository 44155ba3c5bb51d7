import { join } from "node:path";
import { readTranscript, transcriptTotals } from "../../../agent/transcript.ts";
import { TRANSCRIPT_FILE } from "../../../usage/transcript-path.ts";

/**
 * What an agent job's run spent when it printed no result (it was stopped, timed out, or
 * its supervisor died first): the totals of the transcript its child `dl run` appends to
 * after every turn, in the shape of the child's result, so poll_agent, the job's task
 * and the usage ledger read them as they read a result. Null before the first step.
 */
export function agentSpent(jobDir: string): Record<string, unknown> | null {
  const t = readTranscript(join(jobDir, TRANSCRIPT_FILE));
  if (!t) return null;
  const ran = transcriptTotals(t.lines);
  if (ran.steps === 0) return null;
  const { model, ...counts } = ran;
  return { ...counts, ...(model === null ? {} : { model_used: model }) };
}
