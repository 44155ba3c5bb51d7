import { describeError } from "../../../errors.ts";
import { type CapsView, capsView } from "../../engine/caps.ts";
import { type DshLauncherStatus, findDshLauncher } from "./launcher.ts";
import { enabledAliases, isXiaomi, loadDshModels } from "./models.ts";
import type { DshServiceOptions } from "./service.ts";

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

export function dshStatus(o: DshServiceOptions): DshStatusReport {
  return {
    launcher: findDshLauncher(o.launcher, o.childEnv),
    models_file: modelsFileStatus(o.modelsFile),
    caps: capsView(o.caps),
  };
}
