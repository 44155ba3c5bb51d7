import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config.ts";
import { dispatchSettingsFromConfig } from "../dispatch/pools.ts";
import { poolStatus } from "../dispatch/status.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import type { ProviderModule } from "../jobs/provider-module.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { jobsSummary } from "../jobs/shell/maintenance.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { renderAllJobs, renderPools } from "./status-render.ts";

/**
 * `dl status --watch`: what is running where, for someone with several windows open.
 * Every pool with its holders and waiters, every queued or running job of every provider
 * with its age and queue reason (an agent job's child waiting for a pool slot, with the
 * holders it waits behind), and what each provider shows while watched (the Codex account
 * and quota). Each frame is read fresh from the shared state (locks, job stores, account
 * file) and, like `dl status`, creates nothing; the gateway is not asked (that is `dl status`).
 */
async function frame(config: Config, now: Date, providers: readonly ProviderModule[]): Promise<string> {
  const d = dispatchSettingsFromConfig(config);
  const pools = poolStatus({ slotsDir: d.slotsDir, sizing: d.sizing });
  const t0 = now.getTime();
  const byName = new Map(providers.map((m) => [m.facts.name, m]));
  const jobs = jobsSummary(
    knownJobStores(config.paths),
    sysIdentities,
    (store, row) => byName.get(store.provider)?.slotWait?.(store.stateDir, row, t0) ?? null,
  );
  const watched = await Promise.all(providers.map(async (m) => (await (await m.status?.())?.watch?.(config)) ?? []));
  const t = now.toTimeString().slice(0, 8);
  return [
    `dl status --watch — ${t} (refreshed every second; Ctrl-C to stop)`,
    ...renderPools({ pools }),
    "",
    "jobs (queued and running):",
    ...renderAllJobs(jobs, t0, true, { defaultModel: config.backend.model, pools }),
    ...watched.flat(),
  ].join("\n");
}

/** One snapshot, for a pipe or a file. */
export async function watchSnapshot(config: Config, providers = PROVIDER_MODULES): Promise<string> {
  return `${await frame(config, new Date(), providers)}\n`;
}

/** Redraws the whole screen every second until `signal` (Ctrl-C) fires. */
export async function watchLive(
  config: Config,
  signal: AbortSignal,
  out: NodeJS.WriteStream,
  providers = PROVIDER_MODULES,
): Promise<void> {
  // Alternate screen and hidden cursor: the terminal is given back as it was.
  out.write("\u001b[?1049h\u001b[?25l");
  try {
    while (!signal.aborted) {
      const text = await frame(config, new Date(), providers);
      out.write(`\u001b[H\u001b[2J${text.replaceAll("\n", "\r\n")}\r\n`);
      await sleep(1000, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    out.write("\u001b[?25h\u001b[?1049l");
  }
}
