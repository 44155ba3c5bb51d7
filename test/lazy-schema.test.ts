import { expect, test } from "bun:test";
import { z } from "zod";
import { built, builtOnce, lazyObject, lazySchema } from "../src/lazy-schema.ts";

test("a stand-in is built on first use, once, and answers 'is this a zod schema?' without building", () => {
  let builds = 0;
  const s = lazySchema(() => {
    builds++;
    return z.object({ n: z.number().int() });
  });
  expect("_zod" in s && "_def" in s).toBe(true);
  expect(builds).toBe(0);
  expect(s.safeParse({ n: 1 }).success).toBe(true);
  expect(s.safeParse({ n: 1.5 }).success).toBe(false);
  expect(s instanceof z.ZodObject).toBe(true);
  expect(Object.keys(s.shape)).toEqual(["n"]);
  expect(builds).toBe(1);
});

test("JSON Schema made from a stand-in keeps the real schema's description", () => {
  const described = lazySchema(() => z.string().describe("a name"));
  expect(z.toJSONSchema(described)).toMatchObject({ type: "string", description: "a name" });
  const obj = lazyObject(() => ({ a: z.string().optional().describe("A") }));
  expect(z.toJSONSchema(obj)).toEqual(z.toJSONSchema(z.object({ a: z.string().optional().describe("A") })));
});

test("built() gives the real schema to nest, builtOnce() shares one value", () => {
  const inner = lazySchema(() => z.string().nullable().optional());
  const real = built(inner);
  expect(real).not.toBe(inner);
  expect(built(real)).toBe(real);
  // Nested as the real schema, zod's JSON Schema conversion works as for any schema.
  const direct = z.string().nullable().optional();
  expect(z.toJSONSchema(z.object({ x: real }))).toEqual(z.toJSONSchema(z.object({ x: direct })));
  let made = 0;
  const shape = builtOnce(() => {
    made++;
    return { a: z.string() };
  });
  expect(shape()).toBe(shape());
  expect(made).toBe(1);
});
