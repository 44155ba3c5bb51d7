/**
 * What each variable is for, in docs/CONFIGURATION.md. The variable, its default and its
 * rule come from config.ts (SETTINGS and READ_BESIDE_SETTINGS); only the sentence a rule
 * cannot say lives here, and `shownDefault` where the default is computed at start
 * (a path under $HOME, another variable's value). scripts/config-doc.ts refuses a
 * variable with no entry here and an entry for a variable config.ts does not read.
 */
export type Meaning = { readonly meaning: string; readonly shownDefault?: string };

const stateDir = (what: string, home: string): Meaning => ({
  meaning: `${what} job state (SQLite store, slot files, job folders), shared by every server, \`dl wait\`, \`dl reap\` and \`dl status\`; each provider needs its own.`,
  shownDefault: `\`~/${home}\``,
});

const running = (what: string) => `${what} jobs running at once across every server on this machine.`;
const perProject = (what: string) => `${what} jobs running at once per repository (its worktrees share it).`;
const queue = (what: string) => `${what} jobs that may wait beyond the free slots; a submit past it is refused.`;
const stagger = (what: string) => `Seconds between two ${what} launches, across every server.`;

export const MEANINGS: Readonly<Record<string, Meaning>> = {
  DELEGATE_GATEWAY: {
    meaning: "`litellm` sends model traffic to `DELEGATE_LOCAL_URL`; `bifrost` to `DELEGATE_BIFROST_URL`.",
  },
  DELEGATE_LOCAL_URL: {
    meaning:
      "The gateway's Anthropic-format endpoint; OpenAI-format models use the matching `/v1/chat/completions` on the same host.",
  },
  DELEGATE_BIFROST_URL: { meaning: "Bifrost's base URL (the code lane); requests keep their `/litellm/...` paths." },
  DELEGATE_BIFROST_LOCAL_URL: { meaning: "An optional second Bifrost for `local-*` and `ornith*` models." },
  DELEGATE_BIFROST_API: {
    meaning: "`litellm` keeps `/litellm/...` paths; `openai` sends every model to `/v1/chat/completions`.",
  },
  DELEGATE_BIFROST_VK_LOCAL: { meaning: "Virtual key of the local lane, sent as `x-bf-vk`." },
  DELEGATE_BIFROST_VK_CODE: {
    meaning: "Virtual key of the code lane, sent as `x-bf-vk`; `DELEGATE_LOCAL_KEY` is never sent to Bifrost.",
  },
  DELEGATE_LOCAL_KEY: { meaning: "The gateway key, sent as `x-api-key` and `Authorization: Bearer`." },
  DELEGATE_LOCAL_MODEL: { meaning: "The model of a delegation that names none." },
  DELEGATE_LOCAL_CODING_MODEL: {
    meaning:
      "The model of a coding agent (`coder`, `webdev`, `backend`, `devops`, `frontend`, `fullstack`, `security`) when the call names none; `dl status` checks the gateway serves it.",
    shownDefault: "= `DELEGATE_LOCAL_MODEL`",
  },
  DELEGATE_STREAMING: { meaning: "`0` sends non-streaming requests." },
  DELEGATE_RESEND_REASONING: {
    meaning: "Send a model's reasoning back on the next turn: `auto` only to `deepseek-*`, `1` to all, `0` to none.",
  },
  DELEGATE_PROMPT_CACHING: {
    meaning:
      "`cache_control` breakpoints for `glm-`, `bedrock-`, `claude-` and `anthropic/` models; `0` turns them off.",
  },
  DELEGATE_HTTP_TIMEOUT: { meaning: "Seconds one model request may take." },
  DELEGATE_DISPATCH_TIMEOUT: {
    meaning: "Seconds a whole delegation may take, every turn included; then it stops with `stop_reason: timeout`.",
  },
  DELEGATE_PROVIDER_ALLOW_HOSTS: {
    meaning:
      "Hosts or addresses `delegate_to_provider` may reach although the SSRF guard would refuse them (loopback, private, …).",
  },
  DELEGATE_RUN_PROVIDER_URL: {
    meaning:
      "Set by `dl serve` for the `dl run` of a `delegate_to_provider` background job (usable from a shell too): `dl run` talks to that endpoint, after the SSRF guard, with no failover. Never passed on to another dl.",
  },
  DELEGATE_RUN_PROVIDER_KEY: { meaning: "The key for `DELEGATE_RUN_PROVIDER_URL`." },
  DELEGATE_RUN_PROVIDER_FORMAT: {
    meaning: "The wire format of `DELEGATE_RUN_PROVIDER_URL`; `auto` decides as `delegate_to_provider` does.",
  },
  DELEGATE_MAX_TURNS_LOCAL: { meaning: "Default turn budget of a delegation to a local model." },
  DELEGATE_MAX_TURNS_CLOUD: { meaning: "Default turn budget of a delegation to a cloud model." },
  DELEGATE_MAX_NUDGES: { meaning: "Prods for a turn that announces work but calls no tool." },
  DELEGATE_KEEP_TOOL_RESULTS: {
    meaning: "The newest tool results a prune never stubs (the current turn's are never stubbed either).",
  },
  DELEGATE_CONTEXT_BUDGET: {
    meaning:
      "Characters of tool results a conversation carries whole. Below it every turn only appends, so a prefix cache skips all that came before; past it the oldest results become one-line stubs in one batch, down to a quarter of the budget.",
  },
  DELEGATE_MAX_BATCH_SIZE: { meaning: "Tasks per `delegate_batch`." },
  DELEGATE_RUN_BASH: { meaning: "`0` removes the agents' `run_bash` tool." },
  DELEGATE_RUN_BASH_TIMEOUT: { meaning: "Seconds before a `run_bash` command's whole process group is killed." },
  DELEGATE_RUN_BASH_SANDBOX: {
    meaning:
      "`1` runs every `run_bash` command in the jail (workdir read-write, system read-only, no `$HOME`); a jail that cannot start fails the command, it never runs outside.",
  },
  DELEGATE_MAX_BASH_CONCURRENT: { meaning: "`run_bash` commands running at once per server." },
  DELEGATE_ALLOW_PATH_ESCAPE: { meaning: "`1` lets the agents' file tools reach outside the workdir." },
  DELEGATE_ENV_PASSTHROUGH: {
    meaning:
      "Extra variables agent commands inherit (`NPM_CONFIG_*` names a prefix); names that look like credentials are refused, and a prefix never matches one.",
  },
  DELEGATE_CONCURRENCY_DEFAULT: {
    meaning: "Pool size of a model no bucket covers (each such model has its own pool).",
  },
  DELEGATE_FAILOVER_GRACE: { meaning: "Seconds a failover target waits for a slot of its own pool." },
  DELEGATE_QUEUE_GRACE: { meaning: "Seconds a dispatch waits for a slot of its own pool after the failover walk." },
  DELEGATE_FAILOVER_CHAINS: {
    meaning:
      "JSON, or the path of a JSON file, replacing the failover table; `local-`, `ornith`, `codex` and `gpt-` models still never fail over.",
    shownDefault: "built in",
  },
  DELEGATE_TOOLS: {
    meaning:
      "Backends whose tools `tools/list` names whatever the machine has; empty lists those that can run here (`dl status` says why the others are not).",
  },
  DELEGATE_CODEX_BIN: { meaning: "The Codex CLI (a name on `PATH` or a path)." },
  DELEGATE_CODEX_MODEL: { meaning: "Codex's model when a task names none." },
  DELEGATE_CODEX_MAX_CONCURRENT: { meaning: running("Codex") },
  DELEGATE_CODEX_MAX_PER_PROJECT: { meaning: perProject("Codex") },
  DELEGATE_CODEX_MAX_QUEUE: { meaning: queue("Codex") },
  DELEGATE_CODEX_STAGGER_S: { meaning: stagger("Codex") },
  DELEGATE_CODEX_ALLOW_DANGER: { meaning: "`1` allows Codex's `danger-full-access` sandbox." },
  DELEGATE_CODEX_QUOTA_WARN: { meaning: "Quota percentage from which polls and submits carry a warning." },
  DELEGATE_CODEX_QUOTA_REFUSE_PCT: {
    meaning: "Quota percentage from which submits are refused (unless `allow_over_quota`); unset never refuses.",
  },
  DELEGATE_CODEX_ENV_PASSTHROUGH: {
    meaning:
      "Exact names given to the Codex CLI only, credentials allowed: the `env_key` of a custom provider in `CODEX_HOME/config.toml` (e.g. `AZURE_OPENAI_API_KEY`). `dl status` shows the names, never the values.",
  },
  DELEGATE_AGY_BIN: { meaning: "The Antigravity CLI (a name on `PATH` or a path)." },
  DELEGATE_GEMINI_MAX_CONCURRENT: { meaning: running("Gemini") },
  DELEGATE_GEMINI_MAX_QUEUE: { meaning: queue("Gemini") },
  DELEGATE_GEMINI_ALLOW_DANGER: {
    meaning: "`1` allows the Gemini tools at all (`agy -p` runs with `--dangerously-skip-permissions`).",
  },
  DELEGATE_WRITABLE_TOOL_CONFIG: {
    meaning:
      "Workdir paths (comma-separated) of the project's tool configuration that delegates may write all the same, e.g. `CLAUDE.md`; git metadata never (see [SECURITY.md](SECURITY.md#the-jail)).",
  },
  DELEGATE_DSH_LAUNCHER: { meaning: "The DeepSeek-harness launcher: a name on `PATH` or an absolute path." },
  DELEGATE_DSH_MAX_CONCURRENT: { meaning: running("dsh") },
  DELEGATE_DSH_MAX_PER_PROJECT: { meaning: perProject("dsh") },
  DELEGATE_DSH_MAX_QUEUE: { meaning: queue("dsh") },
  DELEGATE_DSH_STAGGER_S: { meaning: stagger("dsh") },
  DELEGATE_DSH_ENV_PASSTHROUGH: {
    meaning:
      "Exact names given to the dsh launcher only, credentials allowed (the provider key a launcher reads, e.g. `DEEPSEEK_API_KEY`); never `DELEGATE_LOCAL_KEY`. Their values are cut out of what a job reports; `dl status` shows the names only.",
  },
  DELEGATE_AGENT_MAX_CONCURRENT: { meaning: running("Background agent") },
  DELEGATE_AGENT_MAX_PER_PROJECT: { meaning: perProject("Background agent") },
  DELEGATE_AGENT_MAX_QUEUE: { meaning: queue("Background agent") },
  DELEGATE_WAIT_INTERVAL: {
    meaning: "Fallback poll of `dl wait`, in seconds (it wakes within milliseconds of a job's end anyway).",
  },
  DELEGATE_STORE_BUSY_TIMEOUT: {
    meaning:
      "How long a write to a job store waits for another process's write lock, in seconds, before it counts as failed (a job's end is then kept in its folder and recorded later).",
  },
  DELEGATE_JOB_KILL_GRACE: {
    meaning:
      "Seconds between SIGTERM and SIGKILL when a job's process group is stopped (its timeout, a cancel, its server stopping).",
  },
  DELEGATE_JOB_RETENTION_DAYS: {
    meaning: "Finished jobs, kept conversations and transcripts older than this are pruned by `dl reap`.",
  },
  DELEGATE_JOBS_DIE_WITH_SERVER: {
    meaning:
      "`1`: jobs die with the server that took their call, as the Python reference had it (its queued jobs are cancelled when it stops, and its running jobs stop, `cancelled` with `server_stopped`, once it is gone). Unset, jobs outlive their window: each runs under a supervisor of its own (Claude Code's task panel promises that background tasks keep running, and its two exit choices look the same to a server).",
  },
  DELEGATE_TASK_INLINE_S: {
    meaning:
      "For a host that runs calls as MCP tasks: a delegation or submit whose jobs all end within this many seconds answers the call in place; only one still running becomes a task. `0` makes every such call a task.",
  },
  DELEGATE_PRICES_FILE: {
    meaning:
      "A price table in LiteLLM's `model_prices_and_context_window.json` shape (`input_cost_per_token`, `output_cost_per_token`, `cache_read_input_token_cost`, `cache_creation_input_token_cost`): costs of the models it lists are `priced` in results and `dl usage`.",
  },
  DELEGATE_FLAT_RATE_MODELS: {
    meaning:
      "Models you pay nothing per token for (local, flat-rate plans), `prefix*` allowed: their cost is `included`. Any other model's cost is `unknown`, never a guessed zero.",
  },
  DELEGATE_LOG_LEVEL: { meaning: "What reaches stderr (and the host's MCP log)." },
  DELEGATE_LOCAL_AGENTS_DIR: {
    meaning: "Global agent definitions, the third place an agent is looked up.",
    shownDefault: "`~/.claude/agents`",
  },
  DELEGATE_CACHE_DIR: {
    meaning:
      "Pool slot files (`slots/`), the whole text of answers cut in a result (`results/`), and the per-user record of the job stores each `dl serve` serves (`stores/`, always under the default cache dir).",
    shownDefault:
      "`~/.cache/claude-delegate-local` (Linux, or under `$XDG_CACHE_HOME`), `~/Library/Caches/claude-delegate-local` (macOS)",
  },
  DELEGATE_DSH_MODELS_FILE: {
    meaning: "The models dsh tasks may name, read at every submit ([the models file](GUIDE.md#the-models-file)).",
    shownDefault: "`~/.config/neola-lab/dsh-models.json` (under `$XDG_CONFIG_HOME` on Linux)",
  },
  CODEX_HOME: {
    meaning: "The Codex login (`auth.json`) and session files dl reads for quota.",
    shownDefault: "`~/.codex`",
  },
  CLAUDE_CONFIG_DIR: {
    meaning:
      "Claude Code's own configuration folder, as Claude Code sets it for the servers it starts: dl reads the user's settings, plugins and `.claude.json` there to keep what they run in a workdir read-only to delegates.",
    shownDefault: "`~/.claude`",
  },
  DELEGATE_CODEX_STATE_DIR: stateDir("Codex", ".codex-jobs"),
  DELEGATE_GEMINI_STATE_DIR: stateDir("Gemini", ".gemini-jobs"),
  DELEGATE_DSH_STATE_DIR: stateDir("dsh", ".dsh-jobs"),
  DELEGATE_AGENT_STATE_DIR: {
    meaning: `${stateDir("Background agent", "").meaning} Kept conversations live under its \`conversations/\`.`,
    shownDefault: "`~/.agent-jobs`",
  },
  DELEGATE_TEST_ISOLATION_ROOT: {
    meaning: "With `DELEGATE_TEST_ISOLATION`: the absolute folder every writable state path must resolve inside.",
  },
  "DELEGATE_CONCURRENCY_<BUCKET>": {
    meaning:
      "Size of one model pool, e.g. `DELEGATE_CONCURRENCY_GLM_CODING_PLAN=4` (the bucket upper-cased, `-` as `_`).",
    shownDefault: "the bucket table (`local-` 2, the others 6)",
  },
  DELEGATE_TEST_ISOLATION: {
    meaning:
      "Test safety net: when present, dl refuses to start unless every writable state path resolves inside `DELEGATE_TEST_ISOLATION_ROOT`. Not a security boundary.",
    shownDefault: "unset",
  },
  DELEGATE_COMMAND: {
    meaning:
      "The command that started dl, set by the npm package's `dl` script (its path on PATH, or `npx`) before it execs the binary inside `node_modules`: the registration line, `dl serve --check` and watch commands name it instead of that binary's path.",
    shownDefault: "unset (the binary's own path)",
  },
  HOME: { meaning: "Where every default path starts.", shownDefault: "the login's" },
  XDG_CACHE_HOME: { meaning: "Moves the default `DELEGATE_CACHE_DIR` on Linux.", shownDefault: "`~/.cache`" },
  XDG_CONFIG_HOME: {
    meaning:
      "Moves the settings file (`$XDG_CONFIG_HOME/dl/settings.env`) and the default `DELEGATE_DSH_MODELS_FILE` on Linux.",
    shownDefault: "`~/.config`",
  },
  NO_COLOR: { meaning: "Turns colour off in help and `dl status`.", shownDefault: "unset" },
  FORCE_COLOR: { meaning: "Turns colour on even when not on a terminal.", shownDefault: "unset" },
  TERM: { meaning: "`dumb` turns colour off.", shownDefault: "the terminal's" },
};
