import type { AgentSettings } from "../agent/settings.ts";
import type { Endpoint } from "../backends/types.ts";
import type { Config } from "../config.ts";
import type { Surface } from "../surface.ts";
import { newDelegationTranscript, type TranscriptTarget } from "./delegation-transcript.ts";
import type { AcquireSlot, DelegationContext } from "./run-delegation.ts";

/** The long-lived services a delegation draws on (built once per process from Config). */
export type DelegationServices = {
  config: Config;
  settings: AgentSettings;
  gatewayEndpoint: (model: string) => Endpoint;
  acquire: AcquireSlot;
  fallbackNote: (requested: string, answered: string, routing: Record<string, string>) => string | undefined;
};

/**
 * The context every delegation entry point builds the same way: the configured gateway,
 * machine-wide pools with failover, the per-turn HTTP deadline and who-answered notes.
 * Callers override only what differs (an explicit provider endpoint, no failover).
 */
export function delegationContext(
  deps: DelegationServices,
  o: {
    signal: AbortSignal;
    onProgress?: (turn: number, maxTurns: number, message: string) => void;
    endpointFor?: (model: string) => Endpoint;
    failover?: boolean;
    surface?: Surface;
    onModelCall?: (call: number, model: string) => void;
    /** Default: a new delegation transcript (dg-…); `dl run` in a job passes the job's file. */
    transcript?: TranscriptTarget;
    /** The usage ledger's kind (the entry point); null records nothing (a job's child). */
    kind?: string | null;
  },
): DelegationContext {
  return {
    config: deps.config,
    settings: deps.settings,
    endpointFor: o.endpointFor ?? deps.gatewayEndpoint,
    acquire: deps.acquire,
    failover: o.failover ?? true,
    signal: o.signal,
    onProgress: o.onProgress,
    surface: o.surface,
    onModelCall: o.onModelCall,
    completeOptions: { turnTimeoutMs: deps.config.backend.httpTimeoutS * 1000 },
    fallbackNote: deps.fallbackNote,
    transcript: o.transcript ?? newDelegationTranscript(deps.config),
    ...(o.kind === null ? {} : { usageKind: o.kind ?? "delegation" }),
  };
}
