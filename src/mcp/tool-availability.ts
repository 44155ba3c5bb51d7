import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { Config } from "../config.ts";
import type { MachineFacts, ProviderModule } from "../jobs/provider-module.ts";
import type { Backend } from "./tool-table.ts";

/** Whether a backend's tools are listed, and why (for dl status and dl serve --check). */
export type BackendVerdict = { listed: boolean; why: string };

const realMachine: MachineFacts = {
  which: (bin, path) => (isAbsolute(bin) ? (existsSync(bin) ? bin : null) : Bun.which(bin, { PATH: path })),
  exists: existsSync,
};

/**
 * Every backend's verdict, in the providers' order: DELEGATE_TOOLS (names or `all`) lists
 * what it names, whatever the machine has; otherwise a provider's tools are listed when it
 * can run here (its module's `unusable`: only cheap facts, a gate, a binary on PATH, a
 * file). A listed tool may still refuse (a CLI too old, a store that cannot be written); a
 * tool that could only ever refuse is not listed, so it costs a host nothing.
 */
export function backendVerdicts(
  c: Config,
  providers: readonly ProviderModule[],
  m: MachineFacts = realMachine,
): Record<Backend, BackendVerdict> {
  const chosen = c.tools;
  const out: Record<Backend, BackendVerdict> = {};
  for (const p of providers) {
    const b = p.facts.name;
    if (chosen.length > 0) {
      const listed = chosen.includes("all") || chosen.includes(b);
      out[b] = { listed, why: listed ? "named by DELEGATE_TOOLS" : "not named by DELEGATE_TOOLS" };
      continue;
    }
    const why = p.unusable(c, m);
    out[b] = why === null ? { listed: true, why: "usable here" } : { listed: false, why };
  }
  return out;
}
