import { randomBytes } from "node:crypto";
import { countingSink, TranscriptFile, type TranscriptSink } from "../agent/transcript.ts";
import type { Config } from "../config.ts";
import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import { privateDir } from "../sys/private-file.ts";
import { DELEGATION_ID_PREFIX } from "../usage/job-id.ts";
import { delegationsDir, delegationTranscriptFile } from "../usage/transcript-path.ts";

/** Where one delegation's steps go, and the id `dl logs` takes to print them. */
export type TranscriptTarget = { file: string; logId: string | null };

/** A new synchronous delegation's transcript: `dg-…` beside the agent jobs (dl reap prunes both). */
export function newDelegationTranscript(config: Config): TranscriptTarget {
  const id = `${DELEGATION_ID_PREFIX}${randomBytes(5).toString("hex")}`;
  return { file: delegationTranscriptFile(config.paths.stateDirs.agent, id), logId: id };
}

/**
 * Opens the transcript. A transcript that cannot be written costs only the record: the
 * delegation runs, counts its steps, and its result says no logs were kept.
 */
export function openTranscript(
  config: Config,
  t: TranscriptTarget,
): { sink: TranscriptSink; close: () => void; logId: string | null } {
  try {
    if (t.logId?.startsWith(DELEGATION_ID_PREFIX))
      privateDir(delegationsDir(config.paths.stateDirs.agent), config.paths.stateDirs.agent);
    const file = new TranscriptFile(t.file);
    return { sink: file, close: () => file.close(), logId: t.logId };
  } catch (e) {
    log.warn(`the delegation's transcript could not be kept: ${describeError(e)}`);
    return { sink: countingSink(), close: () => {}, logId: null };
  }
}
