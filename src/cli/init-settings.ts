import type { Config } from "../config.ts";
import { updateSettingsText } from "../config-file.ts";
import { DlError } from "../errors.ts";
import { readSettingsFile, writeSettingsFile } from "../sys/settings-file.ts";

/**
 * What `dl init` writes into the per-user settings file (the one every dl process reads):
 * the endpoint and model it settled on, the key and the cache dir only when given. Other
 * lines of an existing file are kept as they are.
 */
const HEADER = [
  "# dl settings: read by every dl process of this user (dl serve, dl run, dl wait, dl status …).",
  "# One NAME=value per line, with the names docs/CONFIGURATION.md lists; a variable set in the",
  "# environment wins over this file for that process. Written by dl init; edit it freely, keep it chmod 600.",
].join("\n");

export type SettingsPlan = { file: string; values: Record<string, string> };

export function settingsPlan(
  config: Config,
  o: { endpoint: string; model: string; key?: string; cacheDir?: string },
): SettingsPlan {
  const values: Record<string, string> = { DELEGATE_LOCAL_URL: o.endpoint, DELEGATE_LOCAL_MODEL: o.model };
  if (o.key) values.DELEGATE_LOCAL_KEY = o.key;
  if (o.cacheDir) values.DELEGATE_CACHE_DIR = o.cacheDir;
  return { file: config.settings.file, values };
}

/** The plan as lines for a person: each setting, a key never shown. */
export function planLines(plan: SettingsPlan): string[] {
  return Object.entries(plan.values).map(([k, v]) => `  ${k}=${k === "DELEGATE_LOCAL_KEY" ? "<the key you gave>" : v}`);
}

/** Settings the environment of this shell sets otherwise: they win over the file here. */
export function shadowedBy(config: Config, plan: SettingsPlan): string[] {
  return Object.keys(plan.values).filter((k) => config.settings.sources[k] === "environment");
}

/** Writes the plan into the file (0600, its folder 0700), keeping its other lines. */
export function writePlan(plan: SettingsPlan): void {
  const old = readSettingsFile(plan.file);
  if (old.state === "refused")
    throw new DlError("bad_config", `the settings file ${plan.file} ${old.problem}: ${old.fix}`, { path: plan.file });
  writeSettingsFile(plan.file, updateSettingsText(old.state === "read" ? old.text : null, plan.values, HEADER));
}
