import type { JobRow } from "../store/types.ts";
import { type EngineOptions, JobEngine } from "./engine.ts";
import type { PollView } from "./poll.ts";
import { flockJobLocks, selfOwner, sysIdentities } from "./sys-adapters.ts";

/** What a provider's service chooses for its engine; the machine-wide parts are filled in. */
type ServiceEngineOptions = Omit<EngineOptions, "locks" | "identities" | "self">;

/**
 * A provider's engine on this machine: caps as flock slot files in its state dir (so
 * every server shares them), real process identities for the reaper, and this server as
 * the owner of the jobs it starts. `overrides` (tests: tick, grace, clock) win.
 */
export async function startMachineEngine(
  o: ServiceEngineOptions,
  overrides: Partial<EngineOptions> = {},
): Promise<JobEngine> {
  const { engine } = await JobEngine.start({
    ...o,
    locks: flockJobLocks(o.stateDir),
    identities: sysIdentities,
    self: selfOwner(),
    ...overrides,
  });
  return engine;
}

/** The engine's poll, each known job's view extended by `view`; unknown ids pass as they are. */
export function pollWith<V>(
  engine: JobEngine,
  ids: readonly string[],
  view: (v: PollView, row: JobRow | undefined) => V,
): (V | ReturnType<JobEngine["poll"]>[number])[] {
  return engine.poll(ids).map((v) => ("provider" in v ? view(v, engine.row(v.id)) : v));
}

/** A JSON column of a row read back as an object; null, corrupt or non-object JSON is {}. */
export function jsonColumn(s: string | null | undefined): Record<string, unknown> {
  if (!s) return {};
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
