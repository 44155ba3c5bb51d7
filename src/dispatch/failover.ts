/**
 * Failover chains: when a model's pool is full, which equivalent models to try, in order.
 *
 * Chains are data. The default table is the reference's; DELEGATE_FAILOVER_CHAINS (JSON
 * text, or the path of a JSON file) is merged over it key by key: an entry replaces the
 * default for that model, and `[]` turns failover off for it. Keys match the requested
 * alias exactly (case-insensitive): a thinking tier is only ever mapped on purpose.
 *
 * The guard is applied to the chain itself, not only to its origin: `local-`, `ornith`,
 * `codex` and `gpt-` never leave and are never entered, whatever the table says. Local
 * models may see regulated data, and a silent hop to a cloud provider is exactly the kind
 * of failure nobody notices; Codex bills a subscription, so hopping to it burns quota.
 */
import { readFileSync } from "node:fs";
import { isLocalLane } from "../backends/gateway.ts";
import { DlError } from "../errors.ts";

export type FailoverChains = Readonly<Record<string, readonly string[]>>;

/**
 * Flash bills per token already, so it hops to the flat-plan models; DeepSeek sits last in
 * the others so a busy afternoon does not quietly become an invoice.
 */
export const DEFAULT_CHAINS: FailoverChains = {
  "glm-coding-plan-think": ["qwen-3-8-max", "deepseek-v4-flash"],
  "deepseek-v4-flash": ["glm-coding-plan-think", "qwen-3-8-max"],
};

/** Pinned to themselves in both directions: the local lane, and Codex's subscription models. */
const SUBSCRIPTION_PREFIXES: readonly string[] = ["codex", "gpt-"];

export function isPinned(model: string): boolean {
  const m = model.trim().toLowerCase();
  return isLocalLane(m) || SUBSCRIPTION_PREFIXES.some((p) => m.startsWith(p));
}

/**
 * The fallbacks for `model`, guarded: nothing for a pinned origin; pinned targets, the
 * model itself, repeats, and targets that share the origin's pool (full too, by
 * definition) are dropped.
 */
export function chainFor(model: string, chains: FailoverChains, bucketOf: (m: string) => string): string[] {
  if (isPinned(model)) return [];
  const key = model.trim().toLowerCase();
  const raw = Object.entries(chains).find(([k]) => k.toLowerCase() === key)?.[1] ?? [];
  const origin = bucketOf(model);
  const seen = new Set<string>([key]);
  const out: string[] = [];
  for (const target of raw) {
    const t = target.trim();
    const lower = t.toLowerCase();
    if (t === "" || seen.has(lower) || isPinned(t) || bucketOf(t) === origin) continue;
    seen.add(lower);
    out.push(t);
  }
  return out;
}

const VAR = "DELEGATE_FAILOVER_CHAINS";
const EXAMPLE = `e.g. {"glm-coding-plan-think":["qwen-3-8-max","deepseek-v4-flash"]}`;

function bad(what: string): DlError {
  return new DlError(
    "bad_config",
    `${VAR} is invalid: ${what}; expected a JSON object of model → list of models, ${EXAMPLE}, or the path of a file holding one`,
    { variable: VAR },
  );
}

/**
 * Reads DELEGATE_FAILOVER_CHAINS (undefined/blank → the defaults). Text starting with `{`
 * is JSON; anything else is a file path. Any problem is one DlError("bad_config") line.
 */
export function parseFailoverChains(
  raw: string | undefined,
  defaults: FailoverChains = DEFAULT_CHAINS,
): FailoverChains {
  const text = raw?.trim() ?? "";
  if (text === "") return defaults;
  let json = text;
  if (!text.startsWith("{")) {
    try {
      json = readFileSync(text, "utf8");
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "unreadable";
      throw bad(`the file ${JSON.stringify(text.slice(0, 200))} cannot be read (${code})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw bad("it is not valid JSON");
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw bad("the JSON is not an object");
  // No prototype: a model named "__proto__" in the JSON is a key like any other.
  const merged: Record<string, readonly string[]> = Object.assign(Object.create(null), defaults);
  for (const [model, list] of Object.entries(value as Record<string, unknown>)) {
    if (model.trim() === "") throw bad("a model name is empty");
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string" && x.trim() !== "")) {
      throw bad(`the entry for ${JSON.stringify(model.slice(0, 80))} is not a list of model names`);
    }
    // Replace any default spelled with another case, so one model has one chain.
    for (const k of Object.keys(merged)) if (k.toLowerCase() === model.toLowerCase()) delete merged[k];
    merged[model] = Object.freeze([...(list as string[])]);
  }
  return Object.freeze(merged);
}
