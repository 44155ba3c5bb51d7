import { z } from "zod";
import { readChildFile } from "../../../sys/child-file.ts";
import { sanitizeLine } from "../../../sys/sanitize.ts";

/**
 * What the dsh launcher leaves in `<out-dir>/result.json`. The change itself stays in the
 * run dir for a person to review; dl reads only this summary.
 */
const count = z
  .number()
  .finite()
  .nonnegative()
  .transform((n) => Math.min(Math.floor(n), Number.MAX_SAFE_INTEGER));
const resultSchema = z.object({
  status: z.string().max(64),
  rc: z.number().int(),
  diff_stat: z.string().max(100_000).nullish(),
  summary: z.string().max(1_000_000).nullish(),
  tokens: z.union([count, z.record(z.string().max(64), count)]).nullish(),
  wall_s: z.number().finite().nonnegative().nullish(),
});
export type DshResult = z.output<typeof resultSchema>;

const SUCCESS = new Set(["done", "ok", "success", "succeeded", "completed"]);

/** The schema's string caps plus room for JSON's quoting and the other fields. */
const DSH_RESULT_MAX_BYTES = 2 * 1024 * 1024;

export type DshOutcome =
  | { ok: true; result: DshResult }
  /** `refused`: result.json was a FIFO, device, symlink or too large (never read, never echoed). */
  | { ok: false; reason: string; result?: DshResult; refused?: true };

/** Reads result.json; a missing, refused or malformed file, or a run the launcher calls failed, is a failure with the reason. */
export async function readDshResult(file: string): Promise<DshOutcome> {
  const read = await readChildFile(file, { maxBytes: DSH_RESULT_MAX_BYTES, over: "refuse" });
  if (!read.ok) {
    if (read.refusal === "missing") return { ok: false, reason: "the launcher wrote no result.json" };
    if (read.refusal === "unreadable") return { ok: false, reason: `result.json ${read.detail}` };
    return { ok: false, reason: `result.json refused: it ${read.detail}`, refused: true };
  }
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    // Its text is not echoed: a launcher could have copied any file dl can read into it.
    return { ok: false, reason: "result.json is not JSON" };
  }
  const parsed = resultSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      ok: false,
      reason: `result.json is malformed at ${issue.path.join(".") || "the top level"}: ${issue.message}`,
    };
  }
  const r = parsed.data;
  if (r.rc !== 0 || !SUCCESS.has(r.status.toLowerCase())) {
    return { ok: false, reason: `the dsh run ended ${sanitizeLine(r.status, 64)} (rc ${r.rc})`, result: r };
  }
  return { ok: true, result: r };
}
