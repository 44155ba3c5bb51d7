import type { Config } from "../../../config.ts";
import { type CapsView, capsView } from "../../engine/caps.ts";
import type { ProviderStatus } from "../../provider-module.ts";
import { type AccountView, CodexAccount } from "./account.ts";
import { CodexQuota, type QuotaVerdict } from "./quota.ts";
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

/** The account and the quota as every server on this state dir shares them. */
function accountAndQuota(c: Config): { account: CodexAccount; quota: CodexQuota } {
  const { codexHome } = c.paths;
  return {
    account: new CodexAccount({ stateDir: c.paths.stateDirs.codex, codexHome }),
    quota: new CodexQuota({ codexHome, warnPct: c.codex.quotaWarnPct, refusePct: c.codex.quotaRefusePct }),
  };
}

export async function codexStatus(c: Config): Promise<CodexStatusReport> {
  const { account, quota } = accountAndQuota(c);
  const caps = c.codex.caps;
  const [cli] = await Promise.all([probeCodexVersion(c.codex.bin, c.codexChildEnv), quota.refresh(true)]);
  return {
    cli,
    account: account.view(caps.maxConcurrent, caps.maxPerProject),
    quota: quota.verdict(),
    caps: capsView(caps),
  };
}

/** The account and the quota as text; `brief` (status --watch) leaves the CLI out. */
function renderCodex(c: Omit<CodexStatusReport, "cli"> & { cli?: CodexVersionStatus }): string[] {
  const a = c.account;
  const cool = a.state === "cooldown" ? ` until ${a.cooldown_until} (${a.cooldown_reason ?? "throttled"})` : "";
  const lines = ["", "codex:"];
  if (c.cli) lines.push(`  cli: ${c.cli.ok ? `${c.cli.version} (${c.cli.path})` : c.cli.message}`);
  lines.push(
    `  account: ${a.state}${cool}; caps ${a.effective_caps.global} global / ${a.effective_caps.per_project} per project${a.adaptive_cap ? ` (halved until ${a.adaptive_until})` : ""}`,
  );
  if (a.auth_hint) lines.push(`  ${a.auth_hint}`);
  if (!c.quota.windows.length) lines.push("  quota: no rate-limit reading in the session files yet");
  for (const w of c.quota.windows)
    lines.push(`  quota ${w.name}: ${w.used_percent}% used${w.resets_at ? `, resets ${w.resets_at}` : ""}`);
  for (const w of c.quota.warnings) lines.push(`  warning: ${w}`);
  return lines;
}

/** `dl status` and `dl status --watch` (which reads the account and quota again every frame). */
export const status: ProviderStatus<CodexStatusReport> = {
  read: codexStatus,
  render: renderCodex,
  async watch(c) {
    const { account, quota } = accountAndQuota(c);
    await quota.refresh(true);
    const caps = c.codex.caps;
    return renderCodex({
      account: account.view(caps.maxConcurrent, caps.maxPerProject),
      quota: quota.verdict(),
      caps: capsView(caps),
    });
  },
};
