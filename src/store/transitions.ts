import { DlError } from "../errors.ts";
import { type JobStatus, TERMINAL_STATUSES } from "./types.ts";

/**
 * Every move a job's status may make, once. A job is queued when it is submitted; it
 * leaves the queue by starting, by a cancel, by its server dying first (`lost`) or by a
 * launch that could not take its locks (`failed`); a running job ends in any terminal
 * status, or goes back to the queue for a retry (a throttled Codex run). A terminal
 * status is never left: a later writer (a reap racing a late end, a second cancel) finds
 * the row gone from what it expected and changes nothing. JobStore.update holds every
 * status write to this table, so no caller can move a row any other way.
 */
export const LEGAL_MOVES: { readonly [S in JobStatus]: readonly JobStatus[] } = {
  queued: ["running", "cancelled", "lost", "failed"],
  running: ["queued", ...TERMINAL_STATUSES],
  ...(Object.fromEntries(TERMINAL_STATUSES.map((s) => [s, []])) as Record<(typeof TERMINAL_STATUSES)[number], []>),
};

/** Whether a row in `from` may become `to`. */
export function canMove(from: JobStatus, to: JobStatus): boolean {
  return LEGAL_MOVES[from].includes(to);
}

/**
 * The statuses a write to `to` may find the row in: the legal ones, narrowed to what the
 * caller expects (its compare-and-set). Throws DlError("internal") for a move no row may
 * make: that is a bug in the caller, never something to retry.
 */
export function movesInto(to: JobStatus, expect?: readonly JobStatus[]): JobStatus[] {
  const from = (Object.keys(LEGAL_MOVES) as JobStatus[]).filter((s) => canMove(s, to));
  const allowed = expect ? from.filter((s) => expect.includes(s)) : from;
  if (allowed.length === 0)
    throw new DlError("internal", `a job cannot become ${to} from ${(expect ?? []).join(" or ") || "any status"}`);
  return allowed;
}
