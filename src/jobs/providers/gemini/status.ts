import type { Config } from "../../../config.ts";
import type { JailProbe } from "../../../sandbox/index.ts";
import type { ProviderStatus } from "../../provider-module.ts";
import { type AgyBinStatus, findAgyBin } from "./bin.ts";
import { geminiRefusal } from "./gate.ts";
import { geminiJailProbe } from "./launch.ts";

/**
 * The Gemini part of `dl status`, read without starting a job engine: whether the tools
 * are allowed, where agy is, and whether the jail can start on this machine.
 */
export type GeminiStatusReport = {
  allowed: boolean;
  cli: AgyBinStatus;
  jail: JailProbe;
  caps: { max_concurrent: number; max_queue: number };
};

export async function geminiStatus(c: Config): Promise<GeminiStatusReport> {
  return {
    allowed: geminiRefusal(c) === null,
    cli: findAgyBin(c.gemini.bin, c.childEnv.PATH ?? ""),
    jail: await geminiJailProbe(c),
    caps: { max_concurrent: c.gemini.caps.maxConcurrent, max_queue: c.gemini.caps.maxQueue },
  };
}

function renderGemini(g: GeminiStatusReport): string[] {
  return [
    "",
    "gemini (agy):",
    `  tools: ${g.allowed ? "allowed (DELEGATE_GEMINI_ALLOW_DANGER=1)" : "off (set DELEGATE_GEMINI_ALLOW_DANGER=1 to allow)"}`,
    `  cli: ${g.cli.ok ? g.cli.path : g.cli.message}`,
    `  jail: ${g.jail.ok ? "ok" : "UNAVAILABLE"} — ${g.jail.detail}${g.jail.fix ? `; fix: ${g.jail.fix}` : ""}`,
    `  caps: ${g.caps.max_concurrent} running, ${g.caps.max_queue} queued, one job per workdir`,
  ];
}

/** A jail that cannot start is ill health only where the user asked for Gemini jobs. */
function jailCheck(g: GeminiStatusReport): string[] {
  if (!g.allowed || g.jail.ok) return [];
  const why = `${g.jail.detail}${g.jail.fix ? `; fix: ${g.jail.fix}` : ""}`;
  return [`jail for Gemini jobs (DELEGATE_GEMINI_ALLOW_DANGER=1) cannot start: ${why}`];
}

export const status: ProviderStatus<GeminiStatusReport> = {
  read: geminiStatus,
  render: renderGemini,
  failedChecks: jailCheck,
};
