import type { Config } from "../../../config.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { DshServiceOptions } from "./service.ts";

/** The dsh service's settings, taken from the one Config; `baseDir` is where the server runs. */
export function dshOptionsFromConfig(c: Config, waitCommand: string, baseDir: string): DshServiceOptions {
  return {
    launcher: c.dsh.launcher,
    modelsFile: c.paths.dshModelsFile,
    baseDir,
    maxConcurrent: c.dsh.caps.maxConcurrent,
    maxPerProject: c.dsh.caps.maxPerProject,
    maxQueue: c.dsh.caps.maxQueue,
    staggerS: c.dsh.caps.staggerS,
    stateDir: c.paths.stateDirs.dsh,
    // Only the launcher gets DELEGATE_DSH_ENV_PASSTHROUGH; git probes do not.
    childEnv: c.dshChildEnv,
    secretValues: c.dsh.envPassthrough.flatMap((name) => c.dshChildEnv[name] ?? []),
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}
