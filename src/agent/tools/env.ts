import { inheritedEnv } from "../../sys/child-env.ts";

/**
 * The environment a run_bash command sees: what the one child-environment policy
 * (sys/child-env.ts) lets through, plus the settings a command without a terminal needs.
 */
export function bashEnv(
  base: Readonly<Record<string, string | undefined>>,
  passthrough: readonly string[] = [],
): Record<string, string> {
  const env = inheritedEnv(base, passthrough);
  // No prompt can be answered (stdin is closed): fail fast instead of hanging to the timeout.
  env.GIT_TERMINAL_PROMPT = "0";
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return env;
}
