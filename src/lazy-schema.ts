import { globalRegistry, z } from "zod";

/**
 * A zod schema (or a shape of them) built the first time something uses it. zod schemas
 * cost time and memory to build, and `dl serve` declares a few hundred (its tools'
 * inputs and outputs, and through the build step scripts/lazy-sdk-schemas.ts the MCP
 * SDK's protocol types), of which answering `initialize` and `tools/list` needs a few
 * dozen. The stand-in is a Proxy that forwards every operation to the real value, so
 * callers use it as they would the schema: methods, properties, `instanceof`.
 *
 * Two details keep it honest:
 * - "is this a zod schema?" (`"_zod" in x`, `"_def" in x`, asked by the MCP SDK when a
 *   tool is registered) is answered without building it: only use this for zod schemas;
 * - metadata (`.describe()`, `.meta()`) lives in zod's registry under the real object;
 *   once built, the stand-in is registered with the same metadata, so JSON Schema made
 *   from the stand-in keeps its description.
 *
 * A stand-in may be parsed, extended or given to the MCP SDK as a tool's schema, but is
 * not nested inside another schema: zod's JSON Schema conversion keys its work by object
 * identity, and its wrappers (optional, nullable, …) look their inner schema up under the
 * real object while the walk recorded the stand-in (the build then fails with "seen is
 * undefined"). Nest `built(x)`, or share nested pieces with `builtOnce`;
 * test/e2e/tool-catalogue.test.ts walks every tool's schemas for a nested stand-in.
 */
export function lazySchema<T extends object>(make: () => T): T {
  let real: T | undefined;
  let proxy: T;
  const get = (): T => {
    if (real === undefined) {
      real = make();
      const meta = globalRegistry.get(real as never);
      if (meta) globalRegistry.add(proxy as never, meta);
    }
    return real;
  };
  proxy = new Proxy({} as T, {
    get: (_t, key) => Reflect.get(get(), key),
    set: (_t, key, value) => Reflect.set(get(), key, value),
    has: (_t, key) => key === "_zod" || key === "_def" || Reflect.has(get(), key),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_t, key) => {
      const d = Reflect.getOwnPropertyDescriptor(get(), key);
      // The target is an empty object: a property it lacks may not be reported as fixed.
      return d && { ...d, configurable: true };
    },
    defineProperty: (_t, key, d) => Reflect.defineProperty(get(), key, d),
    deleteProperty: (_t, key) => Reflect.deleteProperty(get(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(get()),
    setPrototypeOf: () => false,
    preventExtensions: () => false,
  });
  realOf.set(proxy, get);
  return proxy;
}

const realOf = new WeakMap<object, () => object>();

/** Whether `value` is a `lazySchema` stand-in. */
export function isStandIn(value: unknown): boolean {
  return typeof value === "object" && value !== null && realOf.has(value);
}

/** The real schema behind a `lazySchema` stand-in (built now if need be), or `schema` itself. */
export function built<T extends object>(schema: T): T {
  const get = realOf.get(schema);
  return get ? (get() as T) : schema;
}

/** A z.object built on first use, for a tool's input or output schema. */
export function lazyObject<S extends z.ZodRawShape>(shape: () => S): z.ZodObject<S> {
  return lazySchema(() => z.object(shape()));
}

/** A value (a shape of zod schemas, say) made on the first call and kept. */
export function builtOnce<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}
