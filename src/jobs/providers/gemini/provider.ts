import { providerEntry } from "../../../providers.ts";
import type { JobRow } from "../../../store/types.ts";
import type { FailureClass, ParsedResult, Provider, RunOutput, ValidatedTask } from "../../engine/provider.ts";
import { requireAgyBin } from "./bin.ts";
import { buildGeminiLaunch, type GeminiJailInputs } from "./launch.ts";
import { type AgyOutcome, parseAgyOutput } from "./output.ts";
import { validateGeminiTask } from "./task.ts";

export interface GeminiProviderOptions extends GeminiJailInputs {
  /** DELEGATE_AGY_BIN (a name on PATH or an absolute path). */
  bin: string;
  defaultTimeoutS?: number;
}

const QUOTA_TEXT = /\b(quota|RESOURCE_EXHAUSTED|usage limit)\b/i;
const THROTTLE_TEXT = /\b(429|rate limit|too many requests)\b/i;

function outcomeOf(out: RunOutput): AgyOutcome {
  return parseAgyOutput({ stdout: out.stdout, stderr: out.stderr, exitCode: out.exitCode, signal: out.signal });
}

/** A failed run's answer: what went wrong, and a sanitized piece of what agy printed. */
function failureText(o: Extract<AgyOutcome, { status: "failed" }>): string {
  return o.excerpt && !o.error.includes(o.excerpt) ? `${o.error} — agy output: ${o.excerpt}` : o.error;
}

function failureClass(o: Extract<AgyOutcome, { status: "failed" }>): FailureClass {
  if (o.failure_kind === "auth") return "auth";
  const text = `${o.error} ${o.excerpt}`;
  if (QUOTA_TEXT.test(text)) return "quota";
  if (THROTTLE_TEXT.test(text)) return "throttle";
  return "other";
}

/**
 * Gemini through `agy` as a job-engine provider. There is no account state to keep: a
 * run's output is read once by output.ts, and a run that exited 0 without a
 * result (no JSON, a JSON error) fails like a non-zero exit.
 */
export function geminiProvider(o: GeminiProviderOptions): Provider {
  return {
    name: "gemini",
    idPrefix: providerEntry("gemini").idPrefix,

    validate(raw: unknown): ValidatedTask {
      return validateGeminiTask(raw, o.defaultTimeoutS);
    },

    launch(job: JobRow, ctx: { jobDir: string }) {
      const bin = requireAgyBin(o.bin, o.childEnv.PATH ?? "");
      return buildGeminiLaunch(job, bin, o, ctx);
    },

    parse(out: RunOutput): ParsedResult {
      const r = outcomeOf(out);
      if (r.status === "done")
        return { finalResponse: r.response, usage: r.usage ? { ...r.usage } : null, sessionId: r.conversation_id };
      return {
        finalResponse: failureText(r),
        usage: r.usage ? { ...r.usage } : null,
        sessionId: r.conversation_id,
        failure: out.exitCode === 0 ? failureClass(r) : null,
      };
    },

    classify(out: RunOutput): FailureClass {
      const r = outcomeOf(out);
      return r.status === "failed" ? failureClass(r) : "other";
    },
  };
}
