import type { ResendReasoningMode } from "../backends/route.ts";
import type { ReadFileSettings, RunBashSettings, WriteFileSettings } from "./tools/settings.ts";

/**
 * Everything the loop needs from configuration: dispatch/agent-settings.ts fills it from
 * the Config (whose SETTINGS hold every default), and so do tests, over an empty
 * environment. Nothing here reads the environment or repeats a default.
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
