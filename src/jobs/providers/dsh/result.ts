import { readFileSync } from "node:fs";
import { z } from "zod";
import { sanitizeLine } from "../../sanitize.ts";

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

export type DshOutcome = { ok: true; result: DshResult } | { ok: false; reason: string; result?: DshResult };

/** Reads result.json; a missing or malformed file, or a run the launcher calls failed, is a failure with the reason. */
export function readDshResult(file: string): DshOutcome {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      ok: false,
      reason: code === "ENOENT" ? "the launcher wrote no result.json" : `result.json unreadable (${code})`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: `result.json is not JSON: ${sanitizeLine(text, 120)}` };
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
