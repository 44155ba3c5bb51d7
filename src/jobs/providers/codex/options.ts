import type { Config } from "../../../config.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { CodexServiceOptions } from "./service.ts";

/** The Codex service's settings, taken from the one Config. */
export function codexOptionsFromConfig(c: Config, waitCommand: string): CodexServiceOptions {
  return {
    bin: c.codex.bin,
    defaultModel: c.codex.model,
    allowDanger: c.codex.allowDanger,
    maxConcurrent: c.codex.caps.maxConcurrent,
    maxPerProject: c.codex.caps.maxPerProject,
    maxQueue: c.codex.caps.maxQueue,
    staggerS: c.codex.caps.staggerS,
    stateDir: c.paths.stateDirs.codex,
    codexHome: c.paths.codexHome,
    quotaWarnPct: c.codex.quotaWarnPct,
    quotaRefusePct: c.codex.quotaRefusePct ?? null,
    // Only the Codex child gets DELEGATE_CODEX_ENV_PASSTHROUGH; git probes do not.
    childEnv: c.codexChildEnv,
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}
