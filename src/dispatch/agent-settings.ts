import { type AgentSettings, agentSettings } from "../agent/settings.ts";
import { WRITE_FILE_DEFAULTS } from "../agent/tools/settings.ts";
import type { Config } from "../config.ts";
import type { CommandJail, CommandJailOptions } from "../sandbox/command-jail.ts";
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
    write: {
      ...WRITE_FILE_DEFAULTS,
      protect: { writable: c.jail.writableToolConfig, gitEnv: c.childEnv },
    },
    bash: {
      enabled: c.agent.runBash,
      timeoutMs: c.agent.runBashTimeoutS * 1000,
      maxConcurrent: c.agent.maxBashConcurrent,
      passthrough: [...c.agent.envPassthrough],
      jail: c.agent.runBashSandbox
        ? jailOnFirstCommand({
            platform: process.platform,
            home: c.paths.home,
            stateDirs: protectedDirs(c.paths),
            path: c.childEnv.PATH ?? "",
            gitEnv: c.childEnv,
            writable: c.jail.writableToolConfig,
          })
        : null,
    },
  });
}

/**
 * The run_bash jail, loaded (bwrap, sandbox-exec, the policy) when the first command is
 * wrapped: every process builds these settings, and most never run a command.
 */
function jailOnFirstCommand(o: CommandJailOptions): CommandJail {
  let jail: Promise<CommandJail> | undefined;
  return {
    async wrap(argv, env, workdir) {
      jail ??= import("../sandbox/command-jail.ts").then((m) => m.commandJail(o));
      return (await jail).wrap(argv, env, workdir);
    },
  };
}
