import { jobDirOf } from "../../../sys/paths.ts";
import { readAgentProgressSync } from "./progress.ts";
import { agentProgressFile } from "./task.ts";

/** What a running agent job's child waits for: a slot of this model's pool. */
export type SlotWait = { model: string; bucket: string };

/** The dispatcher's waiting line (dispatch/pools.ts says it again every few seconds). */
const WAITING = /^waiting for a slot for (\S+): all \d+ slots of pool (\S+) are busy/;

/** Older than this, the line is stale: the child took a slot and is between turns. */
const FRESH_S = 20;

/** Whether the agent job's child is waiting for a pool slot right now, from its progress file. */
export function agentSlotWait(stateDir: string, id: string, now: number): SlotWait | null {
  const p = readAgentProgressSync(agentProgressFile(jobDirOf(stateDir, id)), now);
  if (!p || p.age_s > FRESH_S) return null;
  const m = WAITING.exec(p.last_action);
  return m ? { model: m[1]!, bucket: m[2]! } : null;
}
