import { existsSync } from "node:fs";
import type { JobCaps } from "../../../config-tree.ts";
import { type CapsView, capsView } from "../../engine/caps.ts";
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

/** The report from the parts that hold it: a running service's own, or fresh ones (codexStatus). */
export async function codexStatusOf(p: {
  cli: Promise<CodexVersionStatus>;
  /** The quota's session files, read again (forced for `dl status`, within its TTL for a service). */
  quotaRead: Promise<unknown>;
  account: CodexAccount;
  quota: CodexQuota;
  caps: JobCaps;
}): Promise<CodexStatusReport> {
  const [cli] = await Promise.all([p.cli, p.quotaRead]);
  return {
    cli,
    account: p.account.view(p.caps.maxConcurrent, p.caps.maxPerProject),
    quota: p.quota.verdict(),
    caps: capsView(p.caps),
  };
}

export function codexStatus(o: CodexServiceOptions): Promise<CodexStatusReport> {
  const quota = new CodexQuota({ codexHome: o.codexHome, warnPct: o.quotaWarnPct, refusePct: o.quotaRefusePct });
  return codexStatusOf({
    cli: probeCodexVersion(o.bin, o.childEnv, existsSync(o.stateDir) ? o.stateDir : "/"),
    quotaRead: quota.refresh(true),
    account: new CodexAccount({ stateDir: o.stateDir, codexHome: o.codexHome }),
    quota,
    caps: o.caps,
  });
}
