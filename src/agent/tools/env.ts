/**
 * The environment a run_bash command sees. It is built from an allowlist, never by
 * removing known secrets from everything: a new key added to the user's shell tomorrow
 * must not leak to a delegated model's commands.
 */
const ALLOWED = new Set(["PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TMPDIR", "TZ", "SHELL"]);

/** Names that look like credentials: only an exact passthrough entry lets them through. */
const SECRET_LIKE = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION/i;

/** Never passed, whatever the configuration says: it is dl's own backend key. */
const NEVER = new Set(["DELEGATE_LOCAL_KEY"]);

/**
 * `passthrough` entries are exact names (`NODE_OPTIONS`) or prefixes ending in `*`
 * (`NPM_CONFIG_*`). A prefix never matches a secret-looking name; an exact name does,
 * because the user typed it on purpose.
 */
export function bashEnv(
  base: Readonly<Record<string, string | undefined>>,
  passthrough: readonly string[] = [],
): Record<string, string> {
  const exact = new Set(passthrough.filter((p) => !p.endsWith("*")));
  const prefixes = passthrough.filter((p) => p.endsWith("*")).map((p) => p.slice(0, -1));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || NEVER.has(name)) continue;
    const allowed =
      ALLOWED.has(name) ||
      name.startsWith("LC_") ||
      exact.has(name) ||
      (!SECRET_LIKE.test(name) && prefixes.some((p) => p !== "" && name.startsWith(p)));
    if (allowed) env[name] = value;
  }
  // No prompt can be answered (stdin is closed): fail fast instead of hanging to the timeout.
  env.GIT_TERMINAL_PROMPT = "0";
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return env;
}
