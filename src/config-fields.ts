import { z } from "zod";

/**
 * zod building blocks for environment variables. Every field turns "" into "unset"
 * (`claude mcp add --env X=` leaves empty strings behind) and, when it rejects a value,
 * leaves a message that completes "expected …" so the one-line start-up error can say
 * what is allowed.
 */
const unsetIfBlank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

const optionalString = () => z.preprocess(unsetIfBlank, z.string().optional());

export function envString(def: string) {
  return optionalString().transform((s) => s ?? def);
}

export function envOptionalString() {
  return optionalString();
}

export function envInt(def: number, min: number, max: number) {
  return optionalString().transform((s, ctx) => {
    if (s === undefined) return def;
    const t = s.trim();
    const n = Number(t);
    if (!/^[+-]?\d+$/.test(t) || !Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `an integer from ${min} to ${max}` });
      return z.NEVER;
    }
    return n;
  });
}

export function envNumber(def: number | undefined, min: number, max: number) {
  return optionalString().transform((s, ctx) => {
    if (s === undefined) return def;
    const n = Number(s.trim());
    if (!Number.isFinite(n) || n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `a number from ${min} to ${max}` });
      return z.NEVER;
    }
    return n;
  });
}

const TRUE = new Set(["1", "true", "yes", "on"]);
const FALSE = new Set(["0", "false", "no", "off"]);

export function envBool(def: boolean) {
  return optionalString().transform((s, ctx) => {
    if (s === undefined) return def;
    const t = s.trim().toLowerCase();
    if (TRUE.has(t)) return true;
    if (FALSE.has(t)) return false;
    ctx.addIssue({ code: "custom", message: "1 or 0 (also true/false, yes/no, on/off)" });
    return z.NEVER;
  });
}

export function envEnum<const T extends readonly [string, ...string[]]>(values: T, def: T[number]) {
  return optionalString().transform((s, ctx): T[number] => {
    if (s === undefined) return def;
    const t = s.trim().toLowerCase();
    if ((values as readonly string[]).includes(t)) return t as T[number];
    ctx.addIssue({ code: "custom", message: `one of ${values.join(", ")}` });
    return z.NEVER;
  });
}

/** A comma- or whitespace-separated list of names matching `pattern`. */
export function envList(pattern: RegExp, what: string) {
  return optionalString().transform((s, ctx) => {
    if (s === undefined) return [] as string[];
    const items = s.split(/[\s,]+/).filter(Boolean);
    const bad = items.find((i) => !pattern.test(i));
    if (bad !== undefined) {
      ctx.addIssue({ code: "custom", message: `a comma-separated list of ${what}` });
      return z.NEVER;
    }
    return items;
  });
}

/** Why an http(s) URL given by configuration is unusable, or null when it is fine. */
function httpUrlProblem(s: string): string | null {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return "not a URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "not http(s)";
  if (!u.hostname) return "no host";
  if (u.username || u.password) return "credentials in the URL";
  return null;
}

export function envUrl(def: string | undefined) {
  return optionalString().transform((s, ctx) => {
    const v = s ?? def;
    if (v === undefined) return undefined;
    const problem = httpUrlProblem(v.trim());
    if (problem) {
      ctx.addIssue({ code: "custom", message: `an http(s) URL with a host and no credentials (${problem})` });
      return z.NEVER;
    }
    return v.trim();
  });
}
