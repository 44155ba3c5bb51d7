import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { z } from "zod";
import { DlError } from "../errors.ts";

/**
 * What a delegation cost, in one of four states, never a guessed zero: `priced` from the
 * user's price table (DELEGATE_PRICES_FILE, LiteLLM's model_prices_and_context_window.json
 * shape), `included` for models the user marks as flat-rate or local
 * (DELEGATE_FLAT_RATE_MODELS), `unknown` otherwise; a total over rows of different states
 * is `partial` (its figure covers the priced rows only).
 */
type CostState = "priced" | "included" | "unknown" | "partial";
export type Cost = { state: CostState; usd: number | null };

export type Tokens = { input_tokens: number; cache_read: number; cache_write: number; output_tokens: number };

const Price = z
  .object({
    input_cost_per_token: z.number().nonnegative().optional(),
    output_cost_per_token: z.number().nonnegative().optional(),
    cache_read_input_token_cost: z.number().nonnegative().optional(),
    cache_creation_input_token_cost: z.number().nonnegative().optional(),
  })
  .loose();
type PriceEntry = z.infer<typeof Price>;

export type PriceTable = ReadonlyMap<string, PriceEntry>;

/** LiteLLM's file is ~2 MB; anything much bigger is not a price table. */
const PRICES_MAX_BYTES = 32 * 1024 * 1024;

function readBounded(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error("not a regular file");
    if (st.size > PRICES_MAX_BYTES) throw new Error(`over ${PRICES_MAX_BYTES / 1024 / 1024} MB`);
    const buf = Buffer.alloc(st.size);
    const n = readSync(fd, buf, 0, st.size, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The price table; entries that are not objects with numeric costs (LiteLLM's sample_spec) are skipped. */
function loadPrices(file: string | undefined): PriceTable {
  if (!file) return new Map();
  let raw: unknown;
  try {
    raw = JSON.parse(readBounded(file));
  } catch (e) {
    const why = e instanceof Error ? e.message.split("\n")[0]!.slice(0, 120) : String(e);
    throw new DlError(
      "bad_config",
      `DELEGATE_PRICES_FILE cannot be used: ${why}; expected LiteLLM's model_prices_and_context_window.json`,
    );
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new DlError("bad_config", "DELEGATE_PRICES_FILE must hold one JSON object of model name to prices");
  const table = new Map<string, PriceEntry>();
  for (const [name, v] of Object.entries(raw)) {
    const p = Price.safeParse(v);
    if (p.success && p.data.input_cost_per_token !== undefined && p.data.output_cost_per_token !== undefined)
      table.set(name.toLowerCase(), p.data);
  }
  return table;
}

/** The price table of one file, read once per process; a file that cannot be used is remembered as its error. */
let prices: { file: string | undefined; table: PriceTable | DlError } | undefined;

/**
 * DELEGATE_PRICES_FILE's table, the one loader of both the delegation path (which prices
 * nothing, and says so, when the file is bad) and `dl usage` (which refuses it). Throws
 * DlError("bad_config") for a file that cannot be used.
 */
export function priceTable(file: string | undefined): PriceTable {
  const read = prices && prices.file === file ? prices : { file, table: loadOrError(file) };
  prices = read;
  const { table } = read;
  if (table instanceof DlError) throw table;
  return table;
}

function loadOrError(file: string | undefined): PriceTable | DlError {
  try {
    return loadPrices(file);
  } catch (e) {
    return e instanceof DlError ? e : new DlError("bad_config", String(e));
  }
}

/** A flat-rate pattern: exact, or a prefix when it ends with `*`; case-insensitive. */
function matches(model: string, pattern: string): boolean {
  const m = model.toLowerCase();
  const p = pattern.toLowerCase();
  return p.endsWith("*") ? m.startsWith(p.slice(0, -1)) : m === p;
}

/** The entry for a model: its exact name, else without a provider prefix (`openai/gpt-x` → `gpt-x`). */
function priceOf(model: string, prices: PriceTable): PriceEntry | undefined {
  const m = model.toLowerCase();
  return prices.get(m) ?? prices.get(m.slice(m.lastIndexOf("/") + 1));
}

export function costOf(model: string, t: Tokens, prices: PriceTable, flatRate: readonly string[]): Cost {
  if (flatRate.some((p) => matches(model, p))) return { state: "included", usd: 0 };
  const p = priceOf(model, prices);
  if (!p) return { state: "unknown", usd: null };
  const input = p.input_cost_per_token!;
  const usd =
    t.input_tokens * input +
    t.output_tokens * p.output_cost_per_token! +
    t.cache_read * (p.cache_read_input_token_cost ?? input) +
    t.cache_write * (p.cache_creation_input_token_cost ?? input);
  return { state: "priced", usd };
}

/** The cost of several rows: one state when they agree, else `partial` over the priced ones. */
export function sumCosts(costs: readonly Cost[]): Cost {
  if (costs.length === 0) return { state: "included", usd: 0 };
  const states = new Set(costs.map((c) => c.state));
  const usd = costs.reduce((s, c) => s + (c.usd ?? 0), 0);
  if (states.size === 1) {
    const only = [...states][0]!;
    return { state: only, usd: only === "unknown" ? null : usd };
  }
  if (!states.has("unknown") && !states.has("partial")) return { state: "priced", usd };
  return { state: "partial", usd };
}
