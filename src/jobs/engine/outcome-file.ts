import { lstatSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isTerminal, type JobPatch } from "../../store/types.ts";
import { readChildFile } from "../../sys/child-file.ts";
import { overwritePrivate, writeNewPrivate } from "../../sys/private-file.ts";
import { redactValue } from "../../sys/redact.ts";

/**
 * A job's end, kept in its own dir before the store is asked to record it. When the store
 * cannot be written (a full disk, another process holding its lock) the row would stay
 * `running` for good; this file lets the same server retry later and lets the next start
 * or `dl reap` record the real end instead of calling the job `lost`.
 *
 * Space for it is reserved when the job starts, and the record overwrites that space in
 * place, so writing it needs no new blocks on a disk that has filled meanwhile (on
 * copy-on-write file systems it is best effort).
 */

const OUTCOME_FILE = "outcome.json";
/** Bytes reserved per job: room for the status fields and a few KiB of the final answer. */
export const OUTCOME_RESERVE = 16 * 1024;
/** A record too big for the reserve replaces it whole: a 4 MiB answer, JSON-escaped, fits. */
const OUTCOME_MAX_BYTES = 32 * 1024 * 1024;

export interface OutcomeRecord {
  id: string;
  /** The attempt this end belongs to: a record left by an earlier attempt never applies. */
  started_at: number | null;
  patch: JobPatch;
}

const CUT_NOTE = "\n[cut: the store could not be written when the job ended; the rest was not kept]";

/**
 * The job's child can write its dir: whatever it left at `path` that is not a regular file
 * (a symlink to ~/.bashrc, a FIFO) is removed, never written through.
 */
function clearPlanted(path: string): void {
  try {
    if (!lstatSync(path).isFile()) rmSync(path, { force: true });
  } catch {
    // nothing there
  }
}

/** Clears any earlier attempt's record and reserves the space for this one. Best effort. */
export function reserveOutcome(jobDir: string): void {
  const path = join(jobDir, OUTCOME_FILE);
  try {
    rmSync(path, { force: true });
    writeNewPrivate(path, " ".repeat(OUTCOME_RESERVE));
  } catch {
    // No room even now: saveOutcome still tries a plain write at the end.
  }
}

/** Overwrites the reserved file in place (no new blocks), padding with spaces; never through a link. */
function overwrite(path: string, text: string): void {
  overwritePrivate(path, text.padEnd(OUTCOME_RESERVE, " "), OUTCOME_RESERVE);
}

/** The record cut until it fits the reserve: the final answer first, then bulky extras. */
function fitted(rec: OutcomeRecord): string {
  let text = JSON.stringify(rec);
  let answer = rec.patch.final_response ?? "";
  while (Buffer.byteLength(text) > OUTCOME_RESERVE && answer.length > 0) {
    answer = answer.slice(0, Math.floor(answer.length / 2));
    text = JSON.stringify({ ...rec, patch: { ...rec.patch, final_response: answer + CUT_NOTE } });
  }
  if (Buffer.byteLength(text) <= OUTCOME_RESERVE) return text;
  const { usage: _u, warnings: _w, final_response: _f, ...lean } = rec.patch;
  return JSON.stringify({ ...rec, patch: { ...lean, final_response: CUT_NOTE.trim() } });
}

/** A record larger than the reserve goes to a new file renamed over it: the reserve stays if that fails. */
function replace(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  try {
    rmSync(tmp, { force: true });
    writeNewPrivate(tmp, text);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Writes the record; false when not even the reserved space could take it. Redacted
 * before it is measured (a cut key would no longer be recognized, and redaction changes
 * the length); the file writers redact again on the way to the disk.
 */
export function saveOutcome(jobDir: string, record: OutcomeRecord): boolean {
  const path = join(jobDir, OUTCOME_FILE);
  clearPlanted(path);
  const rec = redactValue(record);
  const full = JSON.stringify(rec);
  const attempts = [
    () => (Buffer.byteLength(full) <= OUTCOME_RESERVE ? overwrite(path, full) : replace(path, full)),
    // No reserve (it could not be made at start): a new file may still find room.
    () => writeNewPrivate(path, full),
    // Too big for the reserve and no room for more: keep what fits in it.
    () => overwrite(path, fitted(rec)),
  ];
  for (const attempt of attempts) {
    try {
      attempt();
      return true;
    } catch {
      // the next way
    }
  }
  return false;
}

/**
 * The recorded end of job `id`'s attempt that started at `startedAt`, or null. The job's
 * child can write its dir, so the file is read like any child's file (a FIFO or a link
 * planted there is refused) and never larger than a record can be.
 */
export async function readOutcome(jobDir: string, id: string, startedAt: number | null): Promise<JobPatch | null> {
  const read = await readChildFile(join(jobDir, OUTCOME_FILE), { maxBytes: OUTCOME_MAX_BYTES, over: "refuse" });
  if (!read.ok || read.text.trim() === "") return null;
  let raw: unknown;
  try {
    raw = JSON.parse(read.text);
  } catch {
    return null;
  }
  const rec = raw as Partial<OutcomeRecord> | null;
  const patch = rec?.patch;
  if (!rec || rec.id !== id || rec.started_at !== startedAt || !patch || typeof patch !== "object") return null;
  // Only an end (or a retry back to the queue) is a record worth applying.
  const status = (patch as JobPatch).status;
  if (typeof status !== "string" || !(isTerminal(status) || status === "queued")) return null;
  return patch as JobPatch;
}
