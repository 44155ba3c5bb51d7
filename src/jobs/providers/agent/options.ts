import type { Config } from "../../../config.ts";
import { selfArgv } from "../../../sys/self-command.ts";
import { workdirGuard } from "../../../sys/workdir-guard.ts";
import type { AgentServiceOptions } from "./service.ts";

/** The agent job service's settings, taken from the one Config; `baseDir` is where the server runs. */
export function agentOptionsFromConfig(c: Config, waitCommand: string, baseDir: string): AgentServiceOptions {
  return {
    baseDir,
    self: selfArgv(),
    env: c.dlChildEnv,
    agentsDir: c.paths.agentsDir,
    maxConcurrent: c.agentJobs.caps.maxConcurrent,
    maxPerProject: c.agentJobs.caps.maxPerProject,
    maxQueue: c.agentJobs.caps.maxQueue,
    stateDir: c.paths.stateDirs.agent,
    guards: { ...workdirGuard(c.paths), toolEnv: c.childEnv },
    engine: { waitCommand },
  };
}
