import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config.ts";
import { dispatchSettingsFromConfig } from "../dispatch/pools.ts";
import { poolStatus } from "../dispatch/status.ts";
import { capsView } from "../jobs/engine/caps.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { agentSlotWait } from "../jobs/providers/agent/slot-wait.ts";
import { CodexAccount } from "../jobs/providers/codex/account.ts";
import { CodexQuota } from "../jobs/providers/codex/quota.ts";
import { codexServiceOptions } from "../jobs/providers/codex/service.ts";
import { jobsSummary } from "../jobs/shell/maintenance.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { renderAllJobs, renderCodex, renderPools } from "./status-render.ts";

/**
 * `dl status --watch`: what is running where, for someone with several windows open.
 * Every pool with its holders and waiters, every queued or running job of every provider
 * with its age and queue reason, and the Codex account and quota. Each frame is read
 * fresh from the shared state (locks, job stores, account file) and, like `dl status`,
 * creates nothing; the gateway is not asked (that is `dl status`).
 */
type Sources = { config: Config; account: CodexAccount; quota: CodexQuota; caps: [number, number] };

function sources(config: Config): Sources {
  const o = codexServiceOptions(config, "dl wait");
  return {
    config,
    account: new CodexAccount({ stateDir: o.stateDir, codexHome: o.codexHome }),
    quota: new CodexQuota({ codexHome: o.codexHome, warnPct: o.quotaWarnPct, refusePct: o.quotaRefusePct }),
    caps: [o.caps.maxConcurrent, o.caps.maxPerProject],
  };
}

async function frame(s: Sources, now: Date): Promise<string> {
  const d = dispatchSettingsFromConfig(s.config);
  const pools = poolStatus({ slotsDir: d.slotsDir, sizing: d.sizing });
  const t0 = now.getTime();
  const jobs = jobsSummary(knownJobStores(s.config.paths), sysIdentities, (store, row) =>
    store.provider === "agent" ? agentSlotWait(store.stateDir, row.id, t0) : null,
  );
  await s.quota.refresh(true);
  const codex = renderCodex(
    {
      cli: { ok: true, version: "", path: "" },
      account: s.account.view(...s.caps),
      quota: s.quota.verdict(),
      caps: capsView({ maxConcurrent: s.caps[0], maxPerProject: s.caps[1], maxQueue: 0, staggerS: 0 }),
    },
    true,
  );
  const t = now.toTimeString().slice(0, 8);
  return [
    `dl status --watch — ${t} (refreshed every second; Ctrl-C to stop)`,
    ...renderPools({ pools }),
    "",
    "jobs (queued and running):",
    ...renderAllJobs(jobs, t0, true, { defaultModel: s.config.backend.model, pools }),
    ...codex,
  ].join("\n");
}

/** One snapshot, for a pipe or a file. */
export async function watchSnapshot(config: Config): Promise<string> {
  return `${await frame(sources(config), new Date())}\n`;
}

/** Redraws the whole screen every second until `signal` (Ctrl-C) fires. */
export async function watchLive(config: Config, signal: AbortSignal, out: NodeJS.WriteStream): Promise<void> {
  const s = sources(config);
  // Alternate screen and hidden cursor: the terminal is given back as it was.
  out.write("\u001b[?1049h\u001b[?25l");
  try {
    while (!signal.aborted) {
      const text = await frame(s, new Date());
      out.write(`\u001b[H\u001b[2J${text.replaceAll("\n", "\r\n")}\r\n`);
      await sleep(1000, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    out.write("\u001b[?25h\u001b[?1049l");
  }
}
