import type { Config } from "../../../config.ts";
import { probeJailOnce } from "../../../sandbox/index.ts";
import { protectedDirs } from "../../../sys/paths.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { GeminiServiceOptions } from "./service.ts";

/** The Gemini service's settings, taken from the one Config. */
export function geminiOptionsFromConfig(c: Config, waitCommand: string): GeminiServiceOptions {
  const platform = process.platform;
  return {
    bin: c.gemini.bin,
    allowDanger: c.gemini.allowDanger,
    maxConcurrent: c.gemini.caps.maxConcurrent,
    maxQueue: c.gemini.caps.maxQueue,
    stateDir: c.paths.stateDirs.gemini,
    platform,
    home: c.paths.home,
    stateDirs: protectedDirs(c.paths),
    childEnv: c.childEnv,
    probe: () => probeJailOnce({ platform, path: c.childEnv.PATH ?? "", cwd: "/" }),
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}
