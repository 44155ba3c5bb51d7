import { type AgentSettings, agentSettings } from "../agent/settings.ts";
import type { Config } from "../config.ts";
import { commandJail } from "../sandbox/command-jail.ts";
import { protectedDirs } from "../sys/paths.ts";

/** The agent loop's settings, taken from the one Config. */
export function agentSettingsFromConfig(c: Config): AgentSettings {
  return agentSettings({
    defaultModel: c.backend.model,
    codingModel: c.backend.codingModel,
    defaultMaxTurns: c.agent.maxTurnsCloud,
    defaultMaxTurnsLocal: c.agent.maxTurnsLocal,
    maxNudges: c.agent.maxNudges,
    keepToolResults: c.agent.keepToolResults,
    contextBudgetChars: c.agent.contextBudgetChars,
    promptCaching: c.backend.promptCaching,
    resendReasoning: c.backend.resendReasoning,
    streaming: c.backend.streaming,
    allowPathEscape: c.agent.allowPathEscape,
    dispatchTimeoutMs: c.backend.dispatchTimeoutS * 1000,
    baseEnv: c.childEnv,
    bash: {
      enabled: c.agent.runBash,
      timeoutMs: c.agent.runBashTimeoutS * 1000,
      maxConcurrent: c.agent.maxBashConcurrent,
      passthrough: [...c.agent.envPassthrough],
      jail: c.agent.runBashSandbox
        ? commandJail({
            platform: process.platform,
            home: c.paths.home,
            stateDirs: protectedDirs(c.paths),
            path: c.childEnv.PATH ?? "",
          })
        : null,
    },
  });
}
