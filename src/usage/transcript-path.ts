import { existsSync } from "node:fs";
import { join } from "node:path";
import { DELEGATIONS_PROVIDER } from "../providers.ts";
import type { JobStateDir } from "../sys/paths.ts";
import { jobDirOf } from "../sys/paths.ts";

/** A job's transcript (agent jobs: the child `dl run` writes it in the job's folder). */
export const TRANSCRIPT_FILE = "transcript.jsonl";
export const jobTranscriptFile = (stateDir: string, id: string) => join(jobDirOf(stateDir, id), TRANSCRIPT_FILE);

/** Synchronous delegations keep theirs beside the agent jobs, so dl reap prunes both. */
export const delegationsDir = (agentStateDir: string) => join(agentStateDir, "delegations");
export const delegationTranscriptFile = (agentStateDir: string, id: string) =>
  join(delegationsDir(agentStateDir), `${id}.jsonl`);

/** The delegation's transcript in any known agent store, or null. */
export function findDelegationTranscript(stores: readonly JobStateDir[], id: string): string | null {
  for (const s of stores) {
    if (s.provider !== DELEGATIONS_PROVIDER) continue;
    const f = delegationTranscriptFile(s.stateDir, id);
    if (existsSync(f)) return f;
  }
  return null;
}
