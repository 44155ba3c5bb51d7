import { providerEntry } from "../../../providers.ts";
import type { JobRow } from "../../../store/types.ts";
import { readChildFile } from "../../../sys/child-file.ts";
import type { FailureClass, ParsedResult, Provider, RunOutput, ValidatedTask } from "../../engine/provider.ts";
import type { CodexAccount } from "./account.ts";
import { classifyCodexFailure, missingVariable, missingVariableMessage } from "./classify.ts";
import { parseCodexEvents } from "./events.ts";
import type { CodexQuota } from "./quota.ts";
import { buildCodexLaunch, lastMessageFile, validateCodexTask } from "./task.ts";

/** Codex's final message is read up to this; a longer one is cut (the full text stays in the job dir). */
const LAST_MESSAGE_MAX_BYTES = 1024 * 1024;

export interface CodexProviderOptions {
  defaultModel: string;
  allowDanger: boolean;
  defaultTimeoutS?: number;
  codexHome: string;
  childEnv: Readonly<Record<string, string>>;
  account: CodexAccount;
  quota: CodexQuota;
  /** The resolved CLI path; null until the version gate has passed (launch then fails "infra"). */
  bin: () => string | null;
}

const CODEX = providerEntry("codex");

/**
 * A finished run's answer: the -o file (it survives an output cap that cut stdout
 * short), else the last message in the events; a failed run without one says which
 * variable Codex missed, or its last error.
 */
async function parseCodexRun(out: RunOutput): Promise<ParsedResult> {
  const ev = parseCodexEvents(out.stdout);
  const last = await readChildFile(lastMessageFile(out.jobDir), { maxBytes: LAST_MESSAGE_MAX_BYTES, over: "head" });
  if (!last.ok && last.refusal !== "missing") {
    const why = `last-message.txt refused: it ${last.detail}; the run's answer is not trusted`;
    return { finalResponse: why, usage: null, sessionId: ev.sessionId, failure: "result_file_refused" };
  }
  // Missing: the run failed before a final message.
  const text = last.ok ? last.text : null;
  let finalResponse = text && text.trim() !== "" ? text : ev.finalMessage;
  if (out.exitCode !== 0 && !finalResponse && ev.errors.length) {
    const variable = missingVariable(ev.errors.join("\n"));
    finalResponse = variable ? missingVariableMessage(variable) : `codex failed: ${ev.errors[ev.errors.length - 1]}`;
  }
  const usage = ev.usage ? { ...ev.usage, turns: ev.turnsCompleted, items: ev.items } : null;
  const warnings = last.ok && last.truncated ? [`last-message.txt over ${LAST_MESSAGE_MAX_BYTES} bytes was cut`] : [];
  return { finalResponse, usage, sessionId: ev.sessionId, warnings };
}

/**
 * Codex as a job-engine provider. The account side effects (cooldown, adaptive cap, auth
 * pause) happen in `classify`, the one place the engine hands over a failed run; the
 * engine reads them back through the gate / effectiveCap / retryDelayMs hooks.
 */
export function codexProvider(o: CodexProviderOptions): Provider {
  return {
    name: CODEX.name,
    idPrefix: CODEX.idPrefix,

    validate(raw: unknown): ValidatedTask {
      const t = validateCodexTask(raw, {
        defaultModel: o.defaultModel,
        allowDanger: o.allowDanger,
        defaultTimeoutS: o.defaultTimeoutS,
      });
      // Throws when DELEGATE_CODEX_QUOTA_REFUSE_PCT is set and reached (submit starts nothing).
      const warnings = [...o.quota.check(t.allowOverQuota)];
      const alias = (t.params as { alias?: string | null }).alias;
      if (alias) warnings.push(`model alias ${alias} → ${t.model}`);
      const { allowOverQuota: _, ...task } = t;
      return { ...task, warnings };
    },

    launch(job: JobRow, ctx: { jobDir: string }) {
      const bin = o.bin();
      if (!bin) throw new Error("the Codex CLI is not available (version gate)");
      return buildCodexLaunch(job, ctx.jobDir, {
        bin,
        codexHome: o.codexHome,
        childEnv: o.childEnv,
        allowDanger: o.allowDanger,
      });
    },

    parse: parseCodexRun,

    classify(out: RunOutput, job: JobRow): FailureClass {
      const ev = parseCodexEvents(out.stdout);
      const c = classifyCodexFailure({
        exitCode: out.exitCode,
        signal: out.signal,
        errors: ev.errors,
        stderr: out.stderr,
      });
      if (c.kind === "throttle") o.account.recordThrottle(job.retry_count + 1, c.hintMs);
      else if (c.kind === "auth") o.account.recordAuthFailure();
      return c.kind;
    },
  };
}
