import { z } from "zod";

/**
 * The JSON Schema tools/list carries, from a tool's zod schema. Every host sends it to
 * the model with every session, so what says nothing is left out: the `$schema` line,
 * zod's safe-integer bounds on every `int()` (±2^53-1, 35 pairs of them), `{}` for "any
 * extra property" (the default), and an output's closing `additionalProperties: false`
 * (an output is checked by the client, never written by the model), and an input's size
 * guards (a `maxLength` of 1000 or more: the server still enforces it); a nullable scalar
 * is `type: [T, "null"]` instead of an `anyOf`.
 */
type Json = Record<string, unknown>;

const SAFE = Number.MAX_SAFE_INTEGER;

function isNullableScalar(anyOf: unknown): string | null {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return null;
  const [a, b] = anyOf as Json[];
  const other = a?.type === "null" ? b : b?.type === "null" ? a : null;
  if (!other || Object.keys(other).length !== 1 || typeof other.type !== "string") return null;
  return other.type;
}

function slim(node: unknown, io: "input" | "output"): unknown {
  if (Array.isArray(node)) return node.map((n) => slim(n, io));
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if ((k === "minimum" || k === "maximum") && Math.abs(v as number) === SAFE) continue;
    if (k === "additionalProperties" && v && typeof v === "object" && Object.keys(v).length === 0) continue;
    if (k === "additionalProperties" && v === false && io === "output") continue;
    if (k === "maxLength" && io === "input" && (v as number) >= 1000) continue;
    out[k] = slim(v, io);
  }
  const scalar = isNullableScalar(out.anyOf);
  if (scalar) {
    delete out.anyOf;
    out.type = [scalar, "null"];
  }
  return out;
}

export function toolJsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
  return slim(rest, io) as Json;
}
