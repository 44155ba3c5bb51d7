import { isSecretName } from "./redact.ts";

/**
 * The one policy for what a child process (a Codex job, an agent's run_bash command) may
 * inherit from dl's environment. It is an allowlist, never "everything minus known
 * secrets": a key added to the user's shell tomorrow must not reach a delegated model.
 *
 * A passthrough entry (DELEGATE_ENV_PASSTHROUGH) is an exact variable name
 * (`NODE_OPTIONS`) or a prefix ending in `*` (`NPM_CONFIG_*`). Configuration refuses
 * entries that look like credentials (the redaction's one rule, sys/redact.ts); at run
 * time a prefix still never matches a credential-looking name, while an exact name does,
 * because someone typed it on purpose.
 */

/**
 * Inherited by every child without being asked for. The locale variables are the ones
 * setlocale(3) reads, by their exact names: `LC_*` is also how ssh's `AcceptEnv LC_*`
 * carries whatever a user sends (`LC_API_TOKEN`), so a prefix would hand that on.
 */
const INHERITED =
  /^(PATH|HOME|USER|LOGNAME|SHELL|LANG|LANGUAGE|LC_(ALL|CTYPE|COLLATE|MESSAGES|MONETARY|NUMERIC|TIME|ADDRESS|IDENTIFICATION|MEASUREMENT|NAME|PAPER|TELEPHONE)|TERM|TMPDIR|TZ|COLORTERM|NO_COLOR)$/;

/** Never passed, whatever the configuration says: dl's own backend key. */
const NEVER = new Set(["DELEGATE_LOCAL_KEY"]);

const PASSTHROUGH_ENTRY = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

/** Why a passthrough entry is refused (completes "expected …"), or undefined when it is fine. */
export function passthroughProblem(entries: readonly string[]): string | undefined {
  if (entries.some((e) => !PASSTHROUGH_ENTRY.test(e))) {
    return "a comma-separated list of environment variable names (a trailing * makes a prefix)";
  }
  const secret = entries.find((e) => isSecretName(e) || NEVER.has(e));
  if (secret !== undefined) {
    return `names that do not look like credentials (${secret} is refused: API keys never reach agent commands)`;
  }
  return undefined;
}

/** Whether `name` may reach a child, given the passthrough entries. */
function mayInherit(name: string, passthrough: readonly string[]): boolean {
  if (NEVER.has(name)) return false;
  // Only an exact passthrough entry, typed on purpose, hands on a name that says credential.
  if (INHERITED.test(name)) return !isSecretName(name);
  return passthrough.some((p) =>
    p.endsWith("*") ? p.length > 1 && !isSecretName(name) && name.startsWith(p.slice(0, -1)) : p === name,
  );
}

/** The entries of `env` that pass the policy. */
export function inheritedEnv(
  env: Readonly<Record<string, string | undefined>>,
  passthrough: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && mayInherit(name, passthrough)) out[name] = value;
  }
  return out;
}

const EXACT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why a DELEGATE_CODEX_ENV_PASSTHROUGH entry is refused, or undefined. These names reach
 * only the Codex CLI, which needs its provider key (`env_key` in its config.toml, e.g.
 * AZURE_OPENAI_API_KEY): credentials are allowed, prefixes are not (a key must be named
 * on purpose), and dl's own backend key never leaves.
 */
export function codexPassthroughProblem(entries: readonly string[]): string | undefined {
  if (entries.some((e) => !EXACT_NAME.test(e))) return "a comma-separated list of exact environment variable names";
  const never = entries.find((e) => NEVER.has(e));
  if (never !== undefined) return `names other than ${never} (dl's own backend key never reaches a child)`;
  return undefined;
}

/** The named variables that are set in `env` (exact names, no policy: the caller checked them). */
export function namedEnv(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (value !== undefined) out[name] = value;
  }
  return out;
}
