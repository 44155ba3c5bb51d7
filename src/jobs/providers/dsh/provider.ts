import { providerEntry } from "../../../providers.ts";
import type { JobRow } from "../../../store/types.ts";
import { outputExcerpt } from "../../../sys/sanitize.ts";
import type { FailureClass, ParsedResult, Provider, RunOutput, ValidatedTask } from "../../engine/provider.ts";
import { requireDshLauncher } from "./launcher.ts";
import { type DshOutcome, type DshResult, readDshResult } from "./result.ts";
import { buildDshLaunch, type DshTaskRules, dshResultFile, validateDshTask } from "./task.ts";

export interface DshProviderOptions extends DshTaskRules {
  /** DELEGATE_DSH_LAUNCHER (name on PATH or absolute path), found again at each launch. */
  launcher: string;
  /** The launcher's environment (config.dshChildEnv: the allowlist plus DELEGATE_DSH_ENV_PASSTHROUGH). */
  childEnv: Readonly<Record<string, string>>;
}

/** What poll_dsh lifts out of a result into its own fields. */
function usageOf(r: DshResult | undefined): Record<string, unknown> | null {
  if (!r) return null;
  return { diff_stat: r.diff_stat ?? null, tokens: r.tokens ?? null, wall_s: r.wall_s ?? null };
}

/**
 * Reads a finished run: `<out-dir>/result.json` is the answer. A launcher that exited 0
 * without a readable result, or with one that says it failed, is a failed job whose
 * response says why and ends with what the launcher printed.
 */
export async function parseDshRun(out: RunOutput): Promise<ParsedResult> {
  const read = await readDshResult(dshResultFile(out.jobDir));
  const result = read.result;
  const usage = usageOf(result);
  if (read.ok && out.exitCode === 0) return { finalResponse: read.result.summary ?? "", usage };
  const ended = out.exitCode === null ? `was stopped (${out.signal ?? "signal"})` : `exited ${out.exitCode}`;
  const why =
    out.exitCode === 0
      ? `dsh run failed: ${read.ok ? "" : read.reason}`
      : `the dsh launcher ${ended}${read.ok ? "" : `; ${read.reason}`}`;
  const parts = [why];
  if (result?.summary) parts.push(`summary: ${result.summary}`);
  parts.push(`launcher output (end):\n${outputExcerpt(out)}`);
  const failure = dshFailure(out, read);
  return { finalResponse: parts.join("\n"), usage, failure };
}

function dshFailure(out: RunOutput, read: DshOutcome): FailureClass | null {
  if (!read.ok && read.refused) return "result_file_refused";
  if (out.exitCode !== 0) return null;
  return read.result ? "other" : "infra";
}

/**
 * The dsh launcher as a job-engine provider. The engine runs it in its own process group
 * with stdin closed; the task travels in a private file.
 */
export function dshProvider(o: DshProviderOptions): Provider {
  return {
    name: "dsh",
    idPrefix: providerEntry("dsh").idPrefix,

    validate(raw: unknown): ValidatedTask {
      return validateDshTask(raw, o);
    },

    launch(job: JobRow, ctx: { jobDir: string }) {
      // Found again now: it may have been removed or replaced since submit.
      const launcher = requireDshLauncher(o.launcher, o.childEnv);
      return buildDshLaunch(job, ctx.jobDir, { launcher, childEnv: o.childEnv });
    },

    parse(out: RunOutput): Promise<ParsedResult> {
      return parseDshRun(out);
    },

    /** Exit 126/127 (cannot run) or 2 (the launcher refused its arguments) is our side; the rest is the run's. */
    classify(out: RunOutput): FailureClass {
      if (out.exitCode === 126 || out.exitCode === 127) return "infra";
      if (out.exitCode === 2 && /usage:/i.test(out.stderr)) return "infra";
      return "other";
    },
  };
}
