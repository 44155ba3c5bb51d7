/**
 * The numbers and names the loop decides before its first request: which model, how
 * many turns, how many output tokens. Pure functions, so they are tested one by one.
 */

const HARD_MAX_TURNS = 40;
const DEFAULT_MAX_TOKENS = 65_536;
/** Thinking models can spend 60K+ tokens reasoning before the first word of output. */
const REASONING_MAX_TOKENS = 150_000;

/** Aliases that reason by default although their name does not say `-max`. */
export const DEFAULT_REASONING_ALIASES = ["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-reasoner"];

/**
 * Output-token ceilings per provider prefix, first match wins. A request above a
 * provider's ceiling is rejected with a 400, so defaults are clamped to these; an
 * explicit max_tokens from the caller is sent as given.
 */
export const DEFAULT_MAX_TOKENS_CAPS: readonly [prefix: string, cap: number][] = [
  ["deepseek-", 393_216],
  ["claude-", 128_000],
  ["anthropic/", 128_000],
  ["bedrock-", 128_000],
  ["gpt-", 128_000],
  ["openai-", 128_000],
  ["glm-", 131_072],
  ["qwen-", 65_536],
];

/** Roles whose work is code: they go to the coding model when the caller names none. */
const CODING_ROLES = ["coder", "webdev", "backend", "devops", "frontend", "fullstack", "security"];

/**
 * `coder`, `backend-architect`, `senior_frontend`, `devops-automator`, `security-engineer`
 * and `webdev2` are coding agents; `code-reviewer`, `docs-writer` and `backendless` are
 * not. Whole words of the name are matched (a trailing number ignored), never substrings.
 */
export function isCodingAgent(name: string): boolean {
  const words = name
    .toLowerCase()
    .split(/[-_]+/)
    .map((w) => w.replace(/\d+$/, ""));
  return words.some((w) => CODING_ROLES.includes(w));
}

export function resolveModel(o: {
  explicit?: string | undefined;
  agentName: string;
  defaultModel: string;
  codingModel?: string | undefined;
}): string {
  if (o.explicit?.trim()) return o.explicit.trim();
  if (o.codingModel && isCodingAgent(o.agentName)) return o.codingModel;
  return o.defaultModel;
}

/** Explicit value (clamped to 1..40) or the configured default (DELEGATE_MAX_TURNS_*, also under the cap). */
export function resolveMaxTurns(explicit: number | undefined, configured: number): number {
  const n = explicit !== undefined && explicit > 0 ? explicit : configured;
  return Math.max(1, Math.min(HARD_MAX_TURNS, Math.floor(n)));
}

function isReasoningModel(model: string, aliases: readonly string[] = DEFAULT_REASONING_ALIASES): boolean {
  const m = model.toLowerCase();
  // `-max` as a tier: `qwen3-max`, `glm-5-max-preview`, `anthropic/x-max`, not `-maxwell`.
  return /-max(?:$|[-_.:/@])/.test(m) || aliases.some((a) => a.toLowerCase() === m);
}

export function resolveMaxTokens(o: {
  explicit?: number | undefined;
  model: string;
  reasoningAliases?: readonly string[];
  caps?: readonly (readonly [string, number])[];
}): number {
  if (o.explicit !== undefined && o.explicit > 0) return Math.floor(o.explicit);
  const want = isReasoningModel(o.model, o.reasoningAliases) ? REASONING_MAX_TOKENS : DEFAULT_MAX_TOKENS;
  const m = o.model.toLowerCase();
  const cap = (o.caps ?? DEFAULT_MAX_TOKENS_CAPS).find(([p]) => m.startsWith(p))?.[1];
  return cap !== undefined ? Math.min(want, cap) : want;
}

/**
 * A reply without tool calls that says what it is about to do ("I'll run the tests",
 * "Let me check the file:") is a model that forgot to call the tool, not a final answer.
 * Only the end of the reply matters: a report may start with "I'll summarize".
 */
const ANNOUNCE =
  /\b(?:I['’]ll|I will|I am going to|I['’]m going to|let me(?! know)|let['’]s|next,? I|now I(?:['’]ll| will)?)\b/i;

export function announcesWork(text: string): boolean {
  const t = text.trim();
  if (!t) return false;
  if (t.endsWith(":")) return true;
  const tail = t.slice(-400);
  const lastSentences = tail
    .split(/(?<=[.!?])\s+/)
    .slice(-2)
    .join(" ");
  return ANNOUNCE.test(lastSentences);
}
