import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { Config } from "../config.ts";
import { findDshLauncher } from "../jobs/providers/dsh/launcher.ts";
import { BACKENDS, type Backend } from "./tool-table.ts";

/** Whether a backend's tools are listed, and why (for dl status and dl serve --check). */
export type BackendVerdict = { listed: boolean; why: string };

/** What the verdicts look at on this machine; tests pass their own. */
export interface MachineFacts {
  /** The path of `bin` on `path`, or null. */
  which(bin: string, path: string): string | null;
  exists(file: string): boolean;
}

const realMachine: MachineFacts = {
  which: (bin, path) => (isAbsolute(bin) ? (existsSync(bin) ? bin : null) : Bun.which(bin, { PATH: path })),
  exists: existsSync,
};

/**
 * Why a backend cannot run here, or null when it can. Only cheap facts: a gate, a binary
 * on PATH, a file. A listed tool may still refuse (a CLI too old, a store that cannot be
 * written); a tool that could only ever refuse is not listed, so it costs a host nothing.
 */
function whyUnusable(backend: Backend, c: Config, m: MachineFacts): string | null {
  switch (backend) {
    case "agent":
      return null;
    case "codex":
      return m.which(c.codex.bin, c.codexChildEnv.PATH ?? "")
        ? null
        : `the Codex CLI (${c.codex.bin}) is not on PATH; install @openai/codex or set DELEGATE_CODEX_BIN`;
    case "gemini":
      return c.gemini.allowDanger ? null : "DELEGATE_GEMINI_ALLOW_DANGER is not 1 (Gemini runs only when allowed)";
    case "dsh": {
      const launcher = findDshLauncher(c.dsh.launcher, c.childEnv);
      if (!launcher.ok) return launcher.message;
      return m.exists(c.paths.dshModelsFile)
        ? null
        : `no dsh models file at ${c.paths.dshModelsFile} (DELEGATE_DSH_MODELS_FILE; see examples/dsh-models.json)`;
    }
  }
}

/** Every backend's verdict: DELEGATE_TOOLS (names or `all`) lists what it names, whatever the machine has. */
export function backendVerdicts(c: Config, m: MachineFacts = realMachine): Record<Backend, BackendVerdict> {
  const chosen = c.tools;
  const out = {} as Record<Backend, BackendVerdict>;
  for (const b of BACKENDS) {
    if (chosen.length > 0) {
      const listed = chosen.includes("all") || chosen.includes(b);
      out[b] = { listed, why: listed ? "named by DELEGATE_TOOLS" : "not named by DELEGATE_TOOLS" };
      continue;
    }
    const why = whyUnusable(b, c, m);
    out[b] = why === null ? { listed: true, why: "usable here" } : { listed: false, why };
  }
  return out;
}
