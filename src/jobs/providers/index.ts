import { PROVIDERS, type ProviderName } from "../../providers.ts";
import type { ProviderModule } from "../provider-module.ts";
import { agent } from "./agent/index.ts";
import { codex } from "./codex/index.ts";
import { dsh } from "./dsh/index.ts";
import { gemini } from "./gemini/index.ts";

/**
 * Each PROVIDERS row's module, by its name: the compiler refuses a row without one, or a
 * module under another name. Everything above the engine iterates PROVIDER_MODULES (in
 * the order of PROVIDERS) instead of naming a provider.
 */
const BY_NAME = { codex, gemini, dsh, agent } satisfies {
  [K in ProviderName]: ProviderModule & { facts: { name: K } };
};

export const PROVIDER_MODULES: readonly ProviderModule[] = PROVIDERS.map((p): ProviderModule => BY_NAME[p.name]);
