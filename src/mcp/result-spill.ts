import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { DelegationResult } from "../dispatch/run-delegation.ts";
import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import { privateDir, writeNewPrivate } from "../sys/private-file.ts";
import { redact } from "../sys/redact.ts";
import { ANSWER_MAX_CHARS, ERROR_MAX_CHARS } from "./result-limits.ts";

/** What a delegation result carries once its answer may have been cut. */
export type BoundedResult = DelegationResult & {
  truncated?: boolean;
  /** Characters in the whole answer, when `truncated`. */
  final_response_length?: number;
  /** A private file (0600) holding the whole answer, when `truncated` and it could be written. */
  final_response_path?: string;
};

/**
 * The result with its answer cut to ANSWER_MAX_CHARS. The whole answer is written under
 * `<cacheDir>/results/` (0700 folder, 0600 file: answers can quote private code), and the
 * result names that file, so nothing the agent produced is lost to the cap. `key` names
 * the file after a job, so asking for the same job's result again reuses it.
 */
export async function boundResult(r: DelegationResult, cacheDir: string, key?: string): Promise<BoundedResult> {
  const out: BoundedResult = { ...r };
  // Redacted before they are cut: half a key is no longer one the channels can recognize.
  if (out.error) out.error = redact(out.error);
  if (out.error && out.error.length > ERROR_MAX_CHARS) out.error = `${out.error.slice(0, ERROR_MAX_CHARS)} …`;
  const full = redact(r.final_response);
  if (full.length <= ANSWER_MAX_CHARS) return out;
  out.final_response = full.slice(0, ANSWER_MAX_CHARS);
  out.truncated = true;
  out.final_response_length = full.length;
  try {
    out.final_response_path = await spill(full, cacheDir, key);
  } catch (e) {
    log.warn(`could not keep the full answer on disk: ${describeError(e)}`);
  }
  return out;
}

/** Kept answers older than this are removed when a new one is written, so the folder cannot grow for ever. */
const KEEP_ANSWERS_MS = 7 * 24 * 3600 * 1000;

async function spill(text: string, cacheDir: string, key?: string): Promise<string> {
  const dir = join(cacheDir, "results");
  privateDir(dir, cacheDir);
  await pruneOld(dir, Date.now() - KEEP_ANSWERS_MS);
  if (key !== undefined) return spillOnce(text, join(dir, `answer-${key}.md`));
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  // Web Crypto, not node:crypto: that module costs dl serve ~3.7 MB at start for this one call.
  const tag = Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString("hex");
  const file = join(dir, `answer-${stamp}-${tag}.md`);
  writeNewPrivate(file, text);
  return file;
}

/** A job's answer is the same each time it is asked for: written once, then reused. */
async function spillOnce(text: string, file: string): Promise<string> {
  try {
    writeNewPrivate(file, text);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  return file;
}

async function pruneOld(dir: string, before: number): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith("answer-")) continue;
    const file = join(dir, name);
    const st = await stat(file).catch(() => undefined);
    if (st && st.mtimeMs < before) await rm(file, { force: true }).catch(() => {});
  }
}
