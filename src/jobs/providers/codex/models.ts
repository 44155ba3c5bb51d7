import { DlError } from "../../../errors.ts";

/**
 * Models a ChatGPT subscription may run through `codex exec`, as the reference lists
 * them. Other names are refused before anything starts: on a subscription they end in a
 * 400 after the job has already queued and waited, which wastes the caller's time.
 */
export const CODEX_MODELS = [
  "gpt-6.1-terra",
  "gpt-6.1-sol",
  "gpt-6-astra",
  "gpt-6-sol",
  "gpt-6-luna",
  "gpt-5.6-sol",
  "gpt-5.6-terra",
  "gpt-5.6-luna",
  "gpt-5.5",
  "gpt-5.4",
  "gpt-5.4-mini",
] as const;
export type CodexModel = (typeof CODEX_MODELS)[number];

/** Short names the reference documents, mapped to the full model name. */
export const CODEX_ALIASES: Readonly<Record<string, CodexModel>> = {
  sol: "gpt-6.1-sol",
  astra: "gpt-6-astra",
  luna: "gpt-6-luna",
  "6-sol": "gpt-6-sol",
  "6.1-sol": "gpt-6.1-sol",
  terra: "gpt-6.1-terra",
  "6.1-terra": "gpt-6.1-terra",
  "5.6-sol": "gpt-5.6-sol",
  "5.6-terra": "gpt-5.6-terra",
  "5.6-luna": "gpt-5.6-luna",
  "5.5": "gpt-5.5",
};

const CODEX_DEFAULT_MODEL: CodexModel = "gpt-6.1-terra";
const CODEX_DEFAULT_EFFORT = "low";
/** Reasoning efforts the CLI's model catalogue offers (not every model takes the top ones). */
const CODEX_EFFORTS = ["minimal", "low", "medium", "high", "xhigh", "max", "ultra"] as const;
export type CodexEffort = (typeof CODEX_EFFORTS)[number];

function allowedList(): string {
  const aliases = Object.entries(CODEX_ALIASES)
    .map(([a, m]) => `${a}→${m}`)
    .join(", ");
  return `allowed: ${CODEX_MODELS.join(", ")}; aliases: ${aliases}`;
}

export interface ResolvedModel {
  model: CodexModel;
  /** Set when the caller used an alias, so the result can say what ran. */
  alias: string | null;
}

/**
 * Maps a model name or alias to a plan-allowed model. `fallback` (DELEGATE_CODEX_MODEL)
 * is used when the caller gave none; it goes through the same check.
 */
export function resolveCodexModel(name: unknown, fallback: string = CODEX_DEFAULT_MODEL): ResolvedModel {
  if (name !== undefined && name !== null && typeof name !== "string") {
    throw new DlError("bad_input", `model must be a string; ${allowedList()}`);
  }
  const raw = (typeof name === "string" && name.trim() !== "" ? name : fallback).trim();
  const key = raw.toLowerCase();
  if ((CODEX_MODELS as readonly string[]).includes(key)) return { model: key as CodexModel, alias: null };
  // Own keys only: "__proto__" or "constructor" must read as an unknown model, not as
  // Object.prototype (which reached the store and failed there as a TypeError).
  const aliased = Object.hasOwn(CODEX_ALIASES, key) ? CODEX_ALIASES[key] : undefined;
  if (aliased) return { model: aliased, alias: key };
  const shown = JSON.stringify(raw.slice(0, 64));
  if (key === "gpt-5.6" || key.endsWith("-codex")) {
    throw new DlError(
      "bad_input",
      `model ${shown} is rejected (HTTP 400) on a ChatGPT subscription; pick another — ${allowedList()}`,
      {
        model: raw.slice(0, 64),
      },
    );
  }
  throw new DlError("bad_input", `unknown Codex model ${shown}; ${allowedList()}`, { model: raw.slice(0, 64) });
}

export function resolveCodexEffort(effort: unknown): CodexEffort {
  if (effort === undefined || effort === null || effort === "") return CODEX_DEFAULT_EFFORT;
  const key = typeof effort === "string" ? effort.trim().toLowerCase() : "";
  if ((CODEX_EFFORTS as readonly string[]).includes(key)) return key as CodexEffort;
  throw new DlError("bad_input", `effort must be one of ${CODEX_EFFORTS.join(", ")} (default ${CODEX_DEFAULT_EFFORT})`);
}
