import type { ResendReasoningMode } from "../backends/route.ts";
import { DEFAULT_MAX_TOKENS_CAPS, DEFAULT_MAX_TURNS, DEFAULT_REASONING_ALIASES } from "./policy.ts";
import {
  READ_FILE_DEFAULTS,
  type ReadFileSettings,
  RUN_BASH_DEFAULTS,
  type RunBashSettings,
  WRITE_FILE_DEFAULTS,
  type WriteFileSettings,
} from "./tools/settings.ts";

/**
 * Everything the loop needs from configuration. config.ts fills it from DELEGATE_*
 * variables; tests build it with agentSettings(). Nothing here reads the environment.
 */
export type AgentSettings = {
  /** DELEGATE_LOCAL_MODEL */
  defaultModel: string;
  /** DELEGATE_LOCAL_CODING_MODEL (unset = no rewrite) */
  codingModel?: string;
  /** DELEGATE_MAX_TURNS_CLOUD: auto budget when the caller passes none (hard cap 40 regardless). */
  defaultMaxTurns: number;
  /** DELEGATE_MAX_TURNS_LOCAL: the same for `local-*` models (default: defaultMaxTurns). */
  defaultMaxTurnsLocal?: number;
  /** DELEGATE_MAX_NUDGES */
  maxNudges: number;
  /** DELEGATE_KEEP_TOOL_RESULTS: the newest tool results a prune never stubs. */
  keepToolResults: number;
  /** DELEGATE_CONTEXT_BUDGET: characters of whole tool results before old ones are stubbed in a batch. */
  contextBudgetChars: number;
  /** DELEGATE_PROMPT_CACHING (only allowlisted prefixes get breakpoints even when on) */
  promptCaching: boolean;
  /** DELEGATE_RESEND_REASONING */
  resendReasoning: ResendReasoningMode;
  /** DELEGATE_STREAMING */
  streaming: boolean;
  /** DELEGATE_ALLOW_PATH_ESCAPE */
  allowPathEscape: boolean;
  /** Whole-delegation deadline in ms (undefined = none; per-request deadlines are the client's). */
  dispatchTimeoutMs?: number;
  reasoningAliases: readonly string[];
  maxTokensCaps: readonly (readonly [string, number])[];
  read: ReadFileSettings;
  write: WriteFileSettings;
  bash: RunBashSettings;
};

/**
 * ~50K tokens of tool results: far inside a local model's per-slot context (llama.cpp
 * slots are often 128-262K tokens), and large enough that a prune comes every several
 * turns rather than every turn.
 */
const DEFAULT_CONTEXT_BUDGET_CHARS = 200_000;
const DEFAULT_KEEP_TOOL_RESULTS = 2;

type Overrides = Partial<Omit<AgentSettings, "bash">> & { bash?: Partial<RunBashSettings> };

export function agentSettings(
  o: Overrides & { baseEnv?: Readonly<Record<string, string | undefined>> } = {},
): AgentSettings {
  const { bash, baseEnv, ...rest } = o;
  return {
    defaultModel: "local-qwen-3-6-35b",
    defaultMaxTurns: DEFAULT_MAX_TURNS,
    maxNudges: 2,
    keepToolResults: DEFAULT_KEEP_TOOL_RESULTS,
    contextBudgetChars: DEFAULT_CONTEXT_BUDGET_CHARS,
    promptCaching: true,
    resendReasoning: "auto",
    streaming: true,
    allowPathEscape: false,
    reasoningAliases: DEFAULT_REASONING_ALIASES,
    maxTokensCaps: DEFAULT_MAX_TOKENS_CAPS,
    read: READ_FILE_DEFAULTS,
    write: WRITE_FILE_DEFAULTS,
    ...rest,
    bash: { ...RUN_BASH_DEFAULTS, baseEnv: baseEnv ?? {}, ...bash },
  };
}
