import { join } from "node:path";
import { readChildFileSync } from "../../sys/child-file.ts";
import { rewritePrivate } from "../../sys/private-file.ts";
import { learnNamed } from "../../sys/redact.ts";
import { redactedTail, sanitizeBlock } from "../../sys/sanitize.ts";
import type { RunOutput } from "./provider.ts";

/**
 * The end of what a CLI job's child printed (Codex's JSON events, a launcher's log), kept
 * in its job folder for `dl logs`: bounded, sanitized, keys redacted, 0600. The child may
 * write in that folder, so the file is opened without following a link it planted.
 */
const OUTPUT_FILE = "output.log";
const STDOUT_TAIL = 16_384;
const STDERR_TAIL = 8_192;

export function keepOutputTail(jobDir: string, out: Pick<RunOutput, "stdout" | "stderr" | "exitCode">): void {
  // What the whole output names as a credential (`cat .env` early in Codex's events) is
  // learned first, so the tail cuts it where it comes again.
  learnNamed(out.stdout);
  learnNamed(out.stderr);
  // Only the tail is redacted (the whole output of a hostile child may be megabytes), from a
  // word's start before the cut: a key across the cut keeps nothing (sanitize.ts redactedTail).
  const clean = (s: string, n: number) => sanitizeBlock(redactedTail(s, n), n + 2);
  const text = [
    `--- stdout (last ${STDOUT_TAIL / 1024} KB) ---`,
    clean(out.stdout, STDOUT_TAIL),
    `--- stderr (last ${STDERR_TAIL / 1024} KB) ---`,
    clean(out.stderr, STDERR_TAIL),
    `--- exit ${out.exitCode ?? "-"} ---`,
    "",
  ].join("\n");
  try {
    rewritePrivate(join(jobDir, OUTPUT_FILE), text);
  } catch {
    // The tail is a convenience: a job never fails for want of it.
  }
}

/**
 * The kept tail; or why it was not read (the child could write there: a link, not a regular
 * file, over its size, another user's), so the reader can say so; or null when there is none.
 */
export function readOutputTail(jobDir: string): { text: string } | { problem: string } | null {
  const read = readChildFileSync(join(jobDir, OUTPUT_FILE), STDOUT_TAIL + STDERR_TAIL + 4096);
  if (read.ok) return { text: read.text };
  return read.refusal === "missing" ? null : { problem: `its ${OUTPUT_FILE} ${read.detail}: not read` };
}
