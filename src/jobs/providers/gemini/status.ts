import type { JailProbe } from "../../../sandbox/index.ts";
import { type AgyBinStatus, findAgyBin } from "./bin.ts";
import type { GeminiServiceOptions } from "./service.ts";

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

export async function geminiStatus(o: GeminiServiceOptions): Promise<GeminiStatusReport> {
  return {
    allowed: o.allowDanger,
    cli: findAgyBin(o.bin, o.childEnv.PATH ?? ""),
    jail: await o.probe(),
    caps: { max_concurrent: o.caps.maxConcurrent, max_queue: o.caps.maxQueue },
  };
}
