import { z } from "zod";
import { checkHttpUrl } from "./backends/url.ts";

/**
 * zod building blocks for environment variables. Every field turns "" into "unset"
 * (`claude mcp add --env X=` leaves empty strings behind) and, when it rejects a value,
 * leaves a message that completes "expected …" so the one-line start-up error can say
 * what is allowed.
 */
const unsetIfBlank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

/** `inner` parses the trimmed text of a set variable; unset (or blank) becomes `def`. */
function field<T extends z.ZodType<unknown, string>, D>(inner: T, def: D) {
  return z.preprocess(unsetIfBlank, z.string().trim().pipe(inner).optional()).transform((v) => v ?? def);
}

export function envString(def: string) {
  return field(z.string(), def);
}

export function envOptionalString() {
  return field(z.string(), undefined);
}

export function envInt<D extends number | undefined>(def: D, min: number, max: number) {
  const error = `an integer from ${min} to ${max}`;
  const digits = z.string().regex(/^[+-]?\d+$/, { error });
  return field(digits.pipe(z.coerce.number<string>().int({ error }).min(min, { error }).max(max, { error })), def);
}

export function envNumber<D extends number | undefined>(def: D, min: number, max: number) {
  const error = `a number from ${min} to ${max}`;
  return field(z.coerce.number<string>({ error }).min(min, { error }).max(max, { error }), def);
}

export function envBool(def: boolean) {
  const words = { truthy: ["1", "true", "yes", "on"], falsy: ["0", "false", "no", "off"] };
  return field(z.stringbool({ ...words, case: "insensitive", error: "1 or 0 (also true/false, yes/no, on/off)" }), def);
}

export function envEnum<const T extends readonly [string, ...string[]]>(values: T, def: T[number]) {
  return field(
    z
      .string()
      .toLowerCase()
      .pipe(z.enum(values, { error: `one of ${values.join(", ")}` })),
    def,
  );
}

/** A comma- or whitespace-separated list of entries matching `pattern`. */
export function envList(pattern: RegExp, what: string) {
  const error = `a comma-separated list of ${what}`;
  const items = z
    .string()
    .transform((s) => s.split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(z.string().regex(pattern, { error })));
  return field(items, [] as string[]);
}

/** An http(s) URL with a host and no credentials (backends/url.ts owns the rule). */
export function envUrl<D extends string | undefined>(def: D) {
  return field(z.string(), def).check((ctx) => {
    if (ctx.value === undefined) return;
    const c = checkHttpUrl(ctx.value);
    if (!c.ok) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: `an http(s) URL with a host and no credentials (${c.problem})`,
      });
    }
  });
}
