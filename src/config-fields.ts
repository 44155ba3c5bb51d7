import { z } from "zod";
import { checkHttpUrl } from "./url.ts";

/**
 * The leaves of config.ts's settings tree: each names its variable, its default and its
 * zod rule. Each rule rejects with a message that completes "expected …", so the
 * one-line start-up error can say what is allowed.
 *
 * Every start of every command reads the configuration, and zod schemas cost time and
 * memory to build: when each of the ~65 variables had five schemas of its own, building
 * them took about 15 ms and 10 MB of `dl serve`'s start (bench/startup), although a user
 * sets a handful. So a leaf is a rule and a default; `envObject` builds the one schema
 * of an environment from the rules of the variables it sets, and variables with the same
 * rule share one schema.
 */
export type EnvField<T, D = T> = { readonly rule: () => z.ZodType<T, string>; readonly def: D };

/**
 * One setting: its variable, its default and its rule. `secret` values are never shown in
 * an error; `only` leaves are read only when another variable has a given value (Bifrost's,
 * when it is the gateway), and `required` says what a chosen-but-unset one must be.
 */
export type Leaf<T, D = T> = EnvField<T, D> & {
  readonly env: string;
  /** What the rule allows, completing "expected …": the error says it, docs/CONFIGURATION.md lists it. */
  readonly expects: string;
  readonly secret?: true;
  readonly only?: { readonly env: string; readonly is: string };
  readonly required?: string;
};

type FieldValues<F> = { -readonly [K in keyof F]: F[K] extends EnvField<infer T, infer D> ? T | D : never };

/** A variable's text as the rules read it: trimmed; blank counts as unset (`claude mcp add --env X=` leaves empty strings behind). */
export function envText(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const text = value.trim();
  return text === "" ? undefined : text;
}

/** The environment with `envText` applied to every value, unset ones left out. */
export function tidyEnv(env: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env)) {
    const text = envText(value);
    if (text !== undefined) out[name] = text;
  }
  return out;
}

/** The values of unset variables. */
export function envDefaults<F extends Record<string, EnvField<unknown, unknown>>>(fields: F): FieldValues<F> {
  return Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, f.def])) as FieldValues<F>;
}

/**
 * The schema of one tidied environment: the rule of each variable it sets, and the
 * default of every other one. Unknown variables are dropped.
 */
export function envObject<F extends Record<string, EnvField<unknown, unknown>>>(
  fields: F,
  env: Record<string, unknown>,
) {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, f] of Object.entries(fields)) if (env[name] !== undefined) shape[name] = f.rule();
  const defaults = envDefaults(fields);
  return z.object(shape).transform((set) => ({ ...defaults, ...set }) as FieldValues<F>);
}

const shared = new Map<string, z.ZodType>();
/** One schema per rule, built when a variable that follows it is first set. */
function sharedRule<T>(key: string, make: () => z.ZodType<T, string>): () => z.ZodType<T, string> {
  return () => {
    let rule = shared.get(key) as z.ZodType<T, string> | undefined;
    if (!rule) {
      rule = make();
      shared.set(key, rule);
    }
    return rule;
  };
}

const stringRule = sharedRule("string", () => z.string());

const ANY_TEXT = "any text";

export function str(env: string, def: string): Leaf<string> {
  return { env, rule: stringRule, def, expects: ANY_TEXT };
}

export function optStr(env: string): Leaf<string, undefined> {
  return { env, rule: stringRule, def: undefined, expects: ANY_TEXT };
}

/** An integer rule on its own, for a family of variables (DELEGATE_CONCURRENCY_<BUCKET>). */
export function intRule(min: number, max: number): () => z.ZodType<number, string> {
  return sharedRule(`int ${min} ${max}`, () => {
    const error = intExpects(min, max);
    const digits = z.string().regex(/^[+-]?\d+$/, { error });
    return digits.pipe(z.coerce.number<string>().check(z.int({ error }), z.gte(min, { error }), z.lte(max, { error })));
  });
}

/** What an integer rule allows (also the DELEGATE_CONCURRENCY_<BUCKET> family's). */
export function intExpects(min: number, max: number): string {
  return `an integer from ${min} to ${max}`;
}

export function int<D extends number | undefined>(env: string, def: D, min: number, max: number): Leaf<number, D> {
  return { env, rule: intRule(min, max), def, expects: intExpects(min, max) };
}

export function num<D extends number | undefined>(env: string, def: D, min: number, max: number): Leaf<number, D> {
  const error = `a number from ${min} to ${max}`;
  const rule = sharedRule(`number ${min} ${max}`, () =>
    z.coerce.number<string>({ error }).check(z.gte(min, { error }), z.lte(max, { error })),
  );
  return { env, rule, def, expects: error };
}

const BOOL_EXPECTS = "1 or 0 (also true/false, yes/no, on/off)";
const boolRule = sharedRule("bool", () =>
  z.stringbool({
    truthy: ["1", "true", "yes", "on"],
    falsy: ["0", "false", "no", "off"],
    case: "insensitive",
    error: BOOL_EXPECTS,
  }),
);

export function bool(env: string, def: boolean): Leaf<boolean> {
  return { env, rule: boolRule, def, expects: BOOL_EXPECTS };
}

export function oneOf<const T extends readonly [string, ...string[]]>(
  env: string,
  values: T,
  def: T[number],
): Leaf<T[number]> {
  const error = `one of ${values.join(", ")}`;
  const rule = () => z.string().toLowerCase().pipe(z.enum(values, { error })) as z.ZodType<T[number], string>;
  return { env, rule, def, expects: error };
}

/**
 * A comma- or whitespace-separated list of entries matching `pattern`; `problem` (when
 * given) judges the whole list and says what is wrong with it.
 */
export function list(
  env: string,
  pattern: RegExp,
  what: string,
  problem: (items: string[]) => string | undefined = () => undefined,
): Leaf<string[]> {
  const error = `a comma-separated list of ${what}`;
  const rule = () => {
    return z
      .string()
      .transform((s) => s.split(/[\s,]+/).filter(Boolean))
      .pipe(z.array(z.string().regex(pattern, { error })))
      .check((ctx) => {
        const message = problem(ctx.value);
        if (message) ctx.issues.push({ code: "custom", input: ctx.value, message });
      });
  };
  return { env, rule, def: [], expects: error };
}

const URL_EXPECTS = "an http(s) URL with a host and no credentials";
/** An http(s) URL with a host and no credentials (backends/url.ts owns the rule). */
const urlRule = sharedRule("url", () =>
  z.string().check((ctx) => {
    const c = checkHttpUrl(ctx.value);
    if (!c.ok) {
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: `${URL_EXPECTS} (${c.problem})`,
      });
    }
  }),
);

export function url<D extends string | undefined>(env: string, def: D): Leaf<string, D> {
  return { env, rule: urlRule, def, expects: URL_EXPECTS };
}

/** A leaf whose value is never shown in an error (a key). */
export function secret<T, D>(leaf: Leaf<T, D>): Leaf<T, D> {
  return { ...leaf, secret: true };
}

/** Leaves read only when `env` is `is` (their defaults otherwise): a stray setting of an unused gateway stops nothing. */
export function onlyWhen<G extends Record<string, Leaf<unknown, unknown>>>(env: string, is: string, group: G): G {
  return Object.fromEntries(Object.entries(group).map(([k, leaf]) => [k, { ...leaf, only: { env, is } }])) as G;
}

/** A leaf that must be set when its `onlyWhen` condition holds; `what` completes "expected …". */
export function required<T, D>(leaf: Leaf<T, D>, what: string): Leaf<T, D> {
  return { ...leaf, required: what };
}
