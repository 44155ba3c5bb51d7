import type { ParsedResult } from "./engine/provider.ts";

/**
 * A CLI given a key by name (DELEGATE_CODEX_ENV_PASSTHROUGH, DELEGATE_DSH_ENV_PASSTHROUGH)
 * may print it: an auth error quoting it, an `env` dump. The runner passes every parsed
 * result through here, so no provider can forget, and the key never reaches the answer,
 * the job store or a log.
 */

/** Values shorter than this are no credential, and cutting them would garble the text. */
const MIN_SECRET_CHARS = 4;

/** Every string in `v` with each secret replaced. */
function scrubbed(v: unknown, scrub: (t: string) => string): unknown {
  if (typeof v === "string") return scrub(v);
  if (Array.isArray(v)) return v.map((x) => scrubbed(x, scrub));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrubbed(x, scrub)]));
  return v;
}

/** `parsed` with each secret value replaced wherever the run's words appear. */
export function withoutSecrets(parsed: ParsedResult, secrets: readonly string[]): ParsedResult {
  const cut = secrets.filter((v) => v.length >= MIN_SECRET_CHARS);
  if (!cut.length) return parsed;
  const scrub = (t: string) => cut.reduce((acc, v) => acc.split(v).join("[redacted]"), t);
  return {
    ...parsed,
    finalResponse: parsed.finalResponse === null ? null : scrub(parsed.finalResponse),
    usage: parsed.usage ? (scrubbed(parsed.usage, scrub) as Record<string, unknown>) : parsed.usage,
    ...(parsed.warnings ? { warnings: parsed.warnings.map(scrub) } : {}),
  };
}

/** The values of the variables a CLI was given by name: what withoutSecrets cuts out. */
export function passedValues(names: readonly string[], env: Readonly<Record<string, string>>): string[] {
  return names.flatMap((name) => env[name] ?? []);
}
