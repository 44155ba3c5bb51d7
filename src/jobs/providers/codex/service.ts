import type { Config } from "../../../config.ts";
import { log } from "../../../log.ts";
import type { PollView } from "../../engine/poll.ts";
import { JobService, type ServiceContext } from "../../service.ts";
import { type AccountOptions, type AccountView, CodexAccount } from "./account.ts";
import { codexProvider } from "./provider.ts";
import { CodexQuota } from "./quota.ts";
import { CodexVersionGate, type CodexVersionStatus, probeCodexVersion } from "./version.ts";

/** What tests change to run the real CLI fast: the account's backoff and windows, the quota's read TTL, a scripted version probe. */
export interface CodexTuning {
  backoffS?: readonly number[];
  account?: Pick<AccountOptions, "throttleWindowMs" | "throttleLimit" | "adaptiveMs">;
  /** How long a read of the session files stays fresh (default 30 s). */
  quotaTtlMs?: number;
  versionProbe?: () => Promise<CodexVersionStatus>;
}

/**
 * The Codex tools' service: the generic JobService with what only Codex has — its CLI's
 * version gate and the plan quota before every submit, the shared account (cooldowns,
 * adaptive caps, auth pause) while admitting, and the account in every answer.
 */
export type CodexService = JobService<PollView, PollView, { account: AccountView }>;

/**
 * This provider's jobs under the Config. Opens the shared state (fails closed with
 * DlError "storage" when it cannot be written) and probes the CLI: a missing or old CLI
 * is logged, not thrown, so the server starts and the Codex tools explain what to install.
 */
export async function startJobs(c: Config, ctx: ServiceContext, t: CodexTuning = {}): Promise<CodexService> {
  const { stateDir } = ctx;
  const { codexHome } = c.paths;
  const now = ctx.engine?.now;
  const caps = c.codex.caps;
  const account = new CodexAccount({ stateDir, codexHome, now, backoffS: t.backoffS, ...t.account });
  const quota = new CodexQuota({
    codexHome,
    warnPct: c.codex.quotaWarnPct,
    refusePct: c.codex.quotaRefusePct ?? null,
    now,
    ttlMs: t.quotaTtlMs,
  });
  const version = new CodexVersionGate(t.versionProbe ?? (() => probeCodexVersion(c.codex.bin, c.codexChildEnv)));
  const first = await version.status();
  if (!first.ok) log.warn(`codex: ${first.message}`);
  const provider = codexProvider({
    defaultModel: c.codex.model,
    allowDanger: c.codex.allowDanger,
    codexHome,
    // Only the Codex child gets DELEGATE_CODEX_ENV_PASSTHROUGH; git probes do not.
    childEnv: c.codexChildEnv,
    account,
    quota,
    bin: () => {
      const s = version.cached;
      return s?.ok ? s.path : null;
    },
  });
  return JobService.start(c, ctx, {
    provider,
    caps,
    maxRetries: 3,
    engine: {
      gate: () => account.gate(),
      effectiveCap: () => account.effectiveCap(caps.maxConcurrent),
      effectiveProjectCap: () => account.effectiveCap(caps.maxPerProject),
      retryDelayMs: (n: number) => account.retryDelayMs(n),
    },
    beforeSubmit: async () => {
      await version.require();
      await quota.refresh();
    },
    extra: () => ({ account: account.view(caps.maxConcurrent, caps.maxPerProject) }),
  });
}
