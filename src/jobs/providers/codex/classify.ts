import type { FailureClass } from "../../engine/provider.ts";

/**
 * Sorts a failed `codex exec` run by what it printed. Texts seen with codex-cli 0.171.0
 * (request_max_retries = 0, stream_max_retries = 0):
 *
 *   HTTP 429 (rate_limit_exceeded)   "exceeded retry limit, last status: 429 Too Many Requests"
 *   SSE response.failed, same code   "rate limit exceeded: … Please try again in 7.5s."
 *   HTTP 429 (usage_limit_reached)   "You’ve hit your usage limit. Upgrade to Pro (…) … or try again at 11:31 AM."
 *   HTTP 401                         "unexpected status 401 Unauthorized: <body message>, url: …"
 *   HTTP 500                         "We’re currently experiencing high demand, which may cause temporary errors."
 *   401 with a ChatGPT auth.json      "Your access token could not be refreshed because … Please sign in again."
 *   auth.json holds an API key        "ChatGPT login is required, but an API key is currently being used. Logging out."
 *   auth.json unreadable (stderr only) "failed to deserialize CLI auth from file: invalid credential JSON …"
 *   no network to chatgpt.com         "Reconnecting... waiting for network (Connection failed: …)" (repeats)
 *   env_key variable not set          "Missing environment variable: `SOMETHING_KEY`."
 *
 * Order matters: a usage-limit text also says "try again", and a 429 is a usage limit
 * when it says so; quota is checked first because it must never be retried.
 */

export interface Classified {
  kind: FailureClass;
  /** A wait the output asked for ("try again in 7.5s", "Retry-After: 9"), capped; else null. */
  hintMs: number | null;
  /** The most telling line, for the job's final_response. */
  message: string;
}

const MISSING_VARIABLE = /missing environment variable:?\s*`?([A-Za-z_][A-Za-z0-9_]*)`?/i;

/**
 * The variable Codex said it lacks (its provider's `env_key`), or null. That is a setup
 * error of this machine, not a login problem: pausing the account for it would hold every
 * queued job until auth.json changes, which no fix of the variable ever does.
 */
export function missingVariable(text: string): string | null {
  return MISSING_VARIABLE.exec(text)?.[1] ?? null;
}

/** What the caller reads when the Codex child lacks its provider's variable. */
export function missingVariableMessage(name: string): string {
  return (
    `configuration error: Codex needs the environment variable ${name} (the env_key of its model provider in ` +
    `CODEX_HOME/config.toml), and it did not reach the Codex child. Set ${name} in dl's environment and add it ` +
    `to DELEGATE_CODEX_ENV_PASSTHROUGH (exact names; given only to Codex), then restart dl and submit again.`
  );
}

const QUOTA = /usage[ _]limit|usage_limit_reached|hit your usage limit|insufficient_quota|purchase more credits/i;
const AUTH =
  /\b401\b|unauthori[sz]ed|not logged in|login is required|CLI auth|credential|log ?in again|sign in again|codex login|refresh[ _]token|token[ _](?:has )?expired|token_expired|invalid_api_key|forced_login_method|auth\.json/i;
const THROTTLE = /\b429\b|rate[ _-]?limit|too many requests|slow down/i;
const INFRA =
  /\b50[0-4]\b|\b529\b|high demand|overloaded|service unavailable|internal server error|bad gateway|stream disconnected|connection (?:refused|reset|closed)|error sending request|timed? ?out|dns|network|econn|broken pipe/i;

/** Longest wait a hint may impose: a bogus "try again in 9999s" must not park the queue. */
export const MAX_HINT_MS = 10 * 60_000;

export function retryHintMs(text: string): number | null {
  const inMatch =
    /(?:try again|retry)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)\s*)+)/i.exec(
      text,
    );
  let ms: number | null = null;
  if (inMatch) {
    ms = 0;
    for (const m of inMatch[1]!.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)/gi)) {
      const v = Number(m[1]);
      const u = m[2]!.toLowerCase();
      ms +=
        u.startsWith("ms") || u.startsWith("milli")
          ? v
          : u.startsWith("h")
            ? v * 3_600_000
            : u.startsWith("m")
              ? v * 60_000
              : v * 1000;
    }
  } else {
    const header = /retry[- ]after:?\s*(\d+(?:\.\d+)?)/i.exec(text);
    if (header) ms = Number(header[1]) * 1000;
  }
  if (ms === null || !Number.isFinite(ms) || ms <= 0) return null;
  return Math.min(Math.ceil(ms), MAX_HINT_MS);
}

export interface FailedRun {
  exitCode: number | null;
  signal: string | null;
  /** Messages of the CLI's error events (events.ts). */
  errors: readonly string[];
  stderr: string;
}

export function classifyCodexFailure(run: FailedRun): Classified {
  const eventText = run.errors.join("\n");
  // Event messages are what the CLI meant to say; stderr also carries warnings and logs,
  // so it only decides when the events are silent.
  const text = eventText || run.stderr;
  const message =
    run.errors[run.errors.length - 1] ??
    lastLine(run.stderr) ??
    (run.signal ? `killed by ${run.signal}` : `exit ${run.exitCode}`);
  const variable = missingVariable(text);
  if (variable) return { kind: "config", hintMs: null, message: missingVariableMessage(variable) };
  if (QUOTA.test(text)) return { kind: "quota", hintMs: null, message };
  if (AUTH.test(text)) return { kind: "auth", hintMs: null, message };
  if (THROTTLE.test(text)) return { kind: "throttle", hintMs: retryHintMs(text), message };
  if (INFRA.test(text) || run.exitCode === null) return { kind: "infra", hintMs: null, message };
  return { kind: "other", hintMs: null, message };
}

function lastLine(s: string): string | null {
  const lines = s
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^WARNING: proceeding|^Reading additional input/.test(l));
  return lines[lines.length - 1] ?? null;
}
