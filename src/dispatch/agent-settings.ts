import { DEFAULT_MAX_TOKENS_CAPS, DEFAULT_REASONING_ALIASES } from "../agent/policy.ts";
import type { AgentSettings } from "../agent/settings.ts";
import {
  READ_FILE_DEFAULTS,
  RUN_BASH_LIMITS,
  type RunBashSettings,
  WRITE_FILE_DEFAULTS,
} from "../agent/tools/settings.ts";
import { type Config, parseConfig } from "../config.ts";
import type { CommandJail, CommandJailOptions } from "../sandbox/command-jail.ts";
import { dlReads } from "../sys/dl-reads.ts";
import { protectedDirs } from "../sys/paths.ts";

/**
 * The agent loop's settings, taken from the one Config: every default is SETTINGS'.
 * `quarantineRoot`: an agent job's folder for what run_bash's jail moves out (dl run
 * --quarantine-dir); else the cache dir's.
 */
export function agentSettingsFromConfig(c: Config, o: { quarantineRoot?: string } = {}): AgentSettings {
  return {
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
    reasoningAliases: DEFAULT_REASONING_ALIASES,
    maxTokensCaps: DEFAULT_MAX_TOKENS_CAPS,
    read: READ_FILE_DEFAULTS,
    write: {
      ...WRITE_FILE_DEFAULTS,
      protect: { writable: c.jail.writableToolConfig, gitEnv: c.gitAskEnv, project: c.callerDir, dlReads: dlReads(c) },
    },
    bash: runBashSettings(c, o.quarantineRoot ?? c.paths.quarantineDir),
  };
}

function runBashSettings(c: Config, quarantineRoot: string): RunBashSettings {
  return {
    ...RUN_BASH_LIMITS,
    enabled: c.agent.runBash,
    timeoutMs: c.agent.runBashTimeoutS * 1000,
    maxConcurrent: c.agent.maxBashConcurrent,
    passthrough: [...c.agent.envPassthrough],
    baseEnv: c.childEnv,
    jail: c.agent.runBashSandbox
      ? jailOnFirstCommand({
          platform: process.platform,
          home: c.paths.home,
          stateDirs: protectedDirs(c.paths),
          path: c.childEnv.PATH ?? "",
          gitEnv: c.gitAskEnv,
          writable: c.jail.writableToolConfig,
          dlReads: dlReads(c),
          project: c.callerDir,
          quarantineRoot,
        })
      : null,
  };
}

type Overrides = Partial<Omit<AgentSettings, "bash">> & { bash?: Partial<RunBashSettings> };

/**
 * For tests and benches: the settings of a user who set nothing (SETTINGS' defaults, no
 * settings file), with `o` over them and `baseEnv` as the children's environment.
 */
export function defaultAgentSettings(
  o: Overrides & { baseEnv?: Readonly<Record<string, string | undefined>> } = {},
): AgentSettings {
  const home = "/nonexistent-home";
  const base = agentSettingsFromConfig(parseConfig({ HOME: home }, { home, cwd: "/" }));
  const { bash, baseEnv, ...rest } = o;
  return { ...base, ...rest, bash: { ...base.bash, baseEnv: baseEnv ?? {}, ...bash } };
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
