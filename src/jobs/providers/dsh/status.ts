import type { Config } from "../../../config.ts";
import { describeError } from "../../../errors.ts";
import { type CapsView, capsView } from "../../engine/caps.ts";
import type { ProviderStatus } from "../../provider-module.ts";
import { type DshLauncherStatus, findDshLauncher } from "./launcher.ts";
import { enabledAliases, isXiaomi, loadDshModels } from "./models.ts";

/**
 * The dsh part of `dl status`, read without starting a job engine: whether the launcher
 * is there, what the models file allows and what is wrong with it, and the caps.
 */
export type DshStatusReport = {
  launcher: DshLauncherStatus;
  models_file: { path: string; exists: boolean; enabled: string[]; problems: string[] };
  caps: CapsView;
};

function modelsFileStatus(file: string): DshStatusReport["models_file"] {
  let models: ReturnType<typeof loadDshModels>;
  try {
    models = loadDshModels(file);
  } catch (e) {
    return { path: file, exists: true, enabled: [], problems: [describeError(e)] };
  }
  if (!models) {
    return {
      path: file,
      exists: false,
      enabled: [],
      problems: ["the file does not exist: every dsh model is refused; create it (shape: examples/dsh-models.json)"],
    };
  }
  const problems = [...models.values()]
    .filter((m) => m.enabled && (isXiaomi(m.alias) || isXiaomi(m.model)))
    .map((m) => `${m.alias} is enabled but refused: MiMo/Xiaomi models may not be dispatched automatically`);
  const enabled = enabledAliases(models);
  if (!enabled.length) problems.push("no model is enabled: every dsh task is refused");
  return { path: file, exists: true, enabled, problems };
}

export function dshStatus(c: Config): DshStatusReport {
  return {
    launcher: findDshLauncher(c.dsh.launcher, c.dshChildEnv),
    models_file: modelsFileStatus(c.paths.dshModelsFile),
    caps: capsView(c.dsh.caps),
  };
}

function renderDsh(d: DshStatusReport): string[] {
  const m = d.models_file;
  const c = d.caps;
  return [
    "",
    "dsh:",
    `  launcher: ${d.launcher.ok ? d.launcher.path : d.launcher.message}`,
    `  models file: ${m.path}${m.exists ? "" : " (missing)"}`,
    `  enabled models: ${m.enabled.length ? m.enabled.join(", ") : "(none)"}`,
    ...m.problems.map((p) => `  problem: ${p}`),
    `  caps: ${c.max_concurrent} global / ${c.max_per_project} per project, queue ${c.max_queue}, stagger ${c.stagger_s} s`,
  ];
}

/** Like Codex's, a missing launcher or models file is information, not ill health. */
export const status: ProviderStatus<DshStatusReport> = {
  read: async (c) => dshStatus(c),
  render: renderDsh,
};
