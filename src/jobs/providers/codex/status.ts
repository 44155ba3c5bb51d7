import { existsSync } from "node:fs";
import { type CapsView, capsView } from "../../caps.ts";
import { type AccountView, CodexAccount } from "./account.ts";
import { CodexQuota, type QuotaVerdict } from "./quota.ts";
import type { CodexServiceOptions } from "./service.ts";
import { type CodexVersionStatus, probeCodexVersion } from "./version.ts";

/**
 * The Codex part of `dl status`, read without starting a job engine: a health check
 * must not reap or admit jobs. CLI version, shared account state (cooldown, adaptive
 * caps, auth pause) and the plan quota with its reset times.
 */
export type CodexStatusReport = {
  cli: CodexVersionStatus;
  account: AccountView;
  quota: QuotaVerdict;
  caps: CapsView;
};

export async function codexStatus(o: CodexServiceOptions): Promise<CodexStatusReport> {
  const account = new CodexAccount({ stateDir: o.stateDir, codexHome: o.codexHome });
  const quota = new CodexQuota({ codexHome: o.codexHome, warnPct: o.quotaWarnPct, refusePct: o.quotaRefusePct });
  const [cli] = await Promise.all([
    probeCodexVersion(o.bin, o.childEnv, existsSync(o.stateDir) ? o.stateDir : "/"),
    quota.refresh(true),
  ]);
  return {
    cli,
    account: account.view(o.maxConcurrent, o.maxPerProject),
    quota: quota.verdict(),
    caps: capsView(o),
  };
}
