import {
  bool,
  envText,
  int,
  intExpects,
  intRule,
  list,
  num,
  oneOf,
  onlyWhen,
  optStr,
  required,
  secret,
  str,
  tidyEnv,
  url,
} from "./config-fields.ts";
import { assignmentsAnyway } from "./config-file.ts";
import { type Origins, sourcesOf, withSettingsFile } from "./config-origin.ts";
import { caps, leavesOf, readTree, type Values } from "./config-tree.ts";
import { DlError } from "./errors.ts";
import { PROVIDERS, type ProviderName } from "./providers.ts";
import { codexPassthroughProblem, inheritedEnv, namedEnv, passthroughProblem } from "./sys/child-env.ts";
import { GIT_CONFIG_SOURCE } from "./sys/git-config-env.ts";
import { resolveStatePaths, type StatePaths, settingsFilePath } from "./sys/paths.ts";
import { isSecretName, knowSecrets, REDACTED, redact, secretValuesOf } from "./sys/redact.ts";
import { readSettingsFile } from "./sys/settings-file.ts";

/**
 * Every setting dl understands, once: the tree's shape is the Config's, each leaf names
 * its variable, default and rule (config-fields.ts), and one schema is built from the
 * variables an environment sets (config-tree.ts). This module is the only reader of
 * process.env: everything else receives the frozen Config. scripts/config-doc.ts writes
 * docs/CONFIGURATION.md from this tree.
 */
/** What DELEGATE_TOOLS names: every job provider (the agent's tools include the gateway's), as listed once in PROVIDERS. */
const BACKENDS = PROVIDERS.map((p) => p.name);

export const SETTINGS = {
  gateway: {
    kind: oneOf("DELEGATE_GATEWAY", ["litellm", "bifrost"], "litellm"),
    localUrl: url("DELEGATE_LOCAL_URL", "http://localhost:4000/v1/messages"),
    ...onlyWhen("DELEGATE_GATEWAY", "bifrost", {
      bifrostUrl: required(
        url("DELEGATE_BIFROST_URL", undefined),
        "the Bifrost base URL when DELEGATE_GATEWAY=bifrost",
      ),
      bifrostLocalUrl: url("DELEGATE_BIFROST_LOCAL_URL", undefined),
      bifrostApi: oneOf("DELEGATE_BIFROST_API", ["litellm", "openai"], "litellm"),
      vkLocal: secret(str("DELEGATE_BIFROST_VK_LOCAL", "")),
      vkCode: secret(str("DELEGATE_BIFROST_VK_CODE", "")),
    }),
  },
  backend: {
    key: secret(str("DELEGATE_LOCAL_KEY", "")),
    model: str("DELEGATE_LOCAL_MODEL", "local-qwen-3-6-35b"),
    /** Unset: the backend model (see buildConfig). */
    codingModel: optStr("DELEGATE_LOCAL_CODING_MODEL"),
    streaming: bool("DELEGATE_STREAMING", true),
    resendReasoning: oneOf("DELEGATE_RESEND_REASONING", ["auto", "1", "0"], "auto"),
    promptCaching: bool("DELEGATE_PROMPT_CACHING", true),
    httpTimeoutS: num("DELEGATE_HTTP_TIMEOUT", 1800, 1, 86_400),
    dispatchTimeoutS: num("DELEGATE_DISPATCH_TIMEOUT", 7200, 1, 7 * 86_400),
    providerAllowHosts: list("DELEGATE_PROVIDER_ALLOW_HOSTS", /^[A-Za-z0-9.:\-_[\]/]+$/, "host names or IP addresses"),
    // Set by dl serve for the child `dl run` of a delegate_to_provider background job (and
    // usable from a shell): that endpoint instead of the gateway, no failover. Never passed on.
    runProvider: {
      url: url("DELEGATE_RUN_PROVIDER_URL", undefined),
      apiKey: secret(optStr("DELEGATE_RUN_PROVIDER_KEY")),
      format: oneOf("DELEGATE_RUN_PROVIDER_FORMAT", ["auto", "anthropic", "openai"], "auto"),
    },
  },
  agent: {
    maxTurnsLocal: int("DELEGATE_MAX_TURNS_LOCAL", 25, 1, 40),
    maxTurnsCloud: int("DELEGATE_MAX_TURNS_CLOUD", 25, 1, 40),
    maxNudges: int("DELEGATE_MAX_NUDGES", 2, 0, 10),
    keepToolResults: int("DELEGATE_KEEP_TOOL_RESULTS", 2, 1, 1000),
    contextBudgetChars: int("DELEGATE_CONTEXT_BUDGET", 200_000, 1, 100_000_000),
    maxBatchSize: int("DELEGATE_MAX_BATCH_SIZE", 4, 1, 64),
    runBash: bool("DELEGATE_RUN_BASH", true),
    runBashTimeoutS: num("DELEGATE_RUN_BASH_TIMEOUT", 120, 1, 86_400),
    runBashSandbox: bool("DELEGATE_RUN_BASH_SANDBOX", false),
    maxBashConcurrent: int("DELEGATE_MAX_BASH_CONCURRENT", 4, 1, 256),
    allowPathEscape: bool("DELEGATE_ALLOW_PATH_ESCAPE", false),
    envPassthrough: list("DELEGATE_ENV_PASSTHROUGH", /^\S+$/, "environment variable names", passthroughProblem),
  },
  pools: {
    defaultSize: int("DELEGATE_CONCURRENCY_DEFAULT", 6, 1, 1024),
    failoverGraceS: num("DELEGATE_FAILOVER_GRACE", 10, 0, 3600),
    queueGraceS: num("DELEGATE_QUEUE_GRACE", 600, 0, 86_400),
    failoverChains: optStr("DELEGATE_FAILOVER_CHAINS"),
  },
  /** Backends whose tools are listed whatever this machine has (`all`, or names); empty: the usable ones (lowercased in buildConfig). */
  tools: list(
    "DELEGATE_TOOLS",
    new RegExp(`^(?:all|${BACKENDS.join("|")})$`, "i"),
    `backends (${BACKENDS.join(", ")}) or all`,
  ),
  codex: {
    bin: str("DELEGATE_CODEX_BIN", "codex"),
    model: str("DELEGATE_CODEX_MODEL", "gpt-6.1-terra"),
    caps: caps({
      maxConcurrent: int("DELEGATE_CODEX_MAX_CONCURRENT", 8, 1, 256),
      maxPerProject: int("DELEGATE_CODEX_MAX_PER_PROJECT", 6, 1, 256),
      maxQueue: int("DELEGATE_CODEX_MAX_QUEUE", 32, 0, 10_000),
      staggerS: num("DELEGATE_CODEX_STAGGER_S", 2.5, 0, 600),
    }),
    allowDanger: bool("DELEGATE_CODEX_ALLOW_DANGER", false),
    quotaWarnPct: num("DELEGATE_CODEX_QUOTA_WARN", 85, 0, 100),
    quotaRefusePct: num("DELEGATE_CODEX_QUOTA_REFUSE_PCT", undefined, 0, 100),
    /** Exact names for the Codex child only, credentials allowed (its provider key); status shows the names, Config.codexChildEnv the values. */
    envPassthrough: list(
      "DELEGATE_CODEX_ENV_PASSTHROUGH",
      /^\S+$/,
      "environment variable names",
      codexPassthroughProblem,
    ),
  },
  gemini: {
    bin: str("DELEGATE_AGY_BIN", "agy"),
    // No per-project cap in the reference: one job per workdir and the global cap.
    caps: caps({
      maxConcurrent: int("DELEGATE_GEMINI_MAX_CONCURRENT", 4, 1, 256),
      maxQueue: int("DELEGATE_GEMINI_MAX_QUEUE", 32, 0, 10_000),
    }),
    allowDanger: bool("DELEGATE_GEMINI_ALLOW_DANGER", false),
  },
  dsh: {
    launcher: str("DELEGATE_DSH_LAUNCHER", "dsh-herdr.sh"),
    caps: caps({
      maxConcurrent: int("DELEGATE_DSH_MAX_CONCURRENT", 2, 1, 256),
      maxPerProject: int("DELEGATE_DSH_MAX_PER_PROJECT", 2, 1, 256),
      maxQueue: int("DELEGATE_DSH_MAX_QUEUE", 16, 0, 10_000),
      staggerS: num("DELEGATE_DSH_STAGGER_S", 5, 0, 600),
    }),
    /** The same rule as Codex's, for the launcher only; the values live in Config.dshChildEnv. */
    envPassthrough: list(
      "DELEGATE_DSH_ENV_PASSTHROUGH",
      /^\S+$/,
      "environment variable names",
      codexPassthroughProblem,
    ),
  },
  /** Background agent jobs (submit_agent), each one a child `dl run`. */
  agentJobs: {
    caps: caps({
      maxConcurrent: int("DELEGATE_AGENT_MAX_CONCURRENT", 4, 1, 256),
      maxPerProject: int("DELEGATE_AGENT_MAX_PER_PROJECT", 4, 1, 256),
      maxQueue: int("DELEGATE_AGENT_MAX_QUEUE", 32, 0, 10_000),
    }),
  },
  watcher: { intervalS: num("DELEGATE_WAIT_INTERVAL", 5, 0.05, 3600) },
  jobs: {
    retentionDays: num("DELEGATE_JOB_RETENTION_DAYS", 7, 0, 3650),
    storeBusyTimeoutS: num("DELEGATE_STORE_BUSY_TIMEOUT", 5, 0.05, 600),
    killGraceS: num("DELEGATE_JOB_KILL_GRACE", 5, 0.1, 600),
    /** Jobs outlive the window that started them unless this says they die with its server (the reference's way). */
    dieWithServer: bool("DELEGATE_JOBS_DIE_WITH_SERVER", false),
  },
  /** Workdir-relative paths a protect rule names that delegates may write all the same (never git's). */
  jail: {
    writableToolConfig: list(
      "DELEGATE_WRITABLE_TOOL_CONFIG",
      /^(?!\/)(?!.*(^|\/)\.\.(\/|$))\S+$/,
      "paths relative to the workdir",
    ),
  },
  /** MCP tasks: a call that ends within this many seconds answers in place; 0 makes every call a task. */
  tasks: { inlineS: num("DELEGATE_TASK_INLINE_S", 3, 0, 60) },
  /**
   * The usage ledger: prices in LiteLLM's model_prices_and_context_window.json shape, and
   * the models the user pays nothing per token for (local, flat-rate plans; `prefix*` allowed).
   */
  usage: {
    pricesFile: optStr("DELEGATE_PRICES_FILE"),
    flatRateModels: list("DELEGATE_FLAT_RATE_MODELS", /^[^\s,]+$/, "model names (a trailing * matches a prefix)"),
  },
  logLevel: oneOf("DELEGATE_LOG_LEVEL", ["silent", "error", "warn", "info", "debug"], "info"),
  /** Where state lives: read by sys/paths.ts into Config.paths. */
  places: {
    agentsDir: optStr("DELEGATE_LOCAL_AGENTS_DIR"),
    cacheDir: optStr("DELEGATE_CACHE_DIR"),
    dshModelsFile: optStr("DELEGATE_DSH_MODELS_FILE"),
    codexHome: optStr("CODEX_HOME"),
    /** Claude Code's own configuration folder (its settings, plugins, .claude.json), as the host sets it. */
    claudeConfigDir: optStr("CLAUDE_CONFIG_DIR"),
    stateDirs: Object.fromEntries(PROVIDERS.map((p) => [p.name, optStr(p.stateEnv)])) as Record<
      ProviderName,
      ReturnType<typeof optStr>
    >,
    // The test safety net: DELEGATE_TEST_ISOLATION's presence (even empty) turns it on, so it is read apart.
    isolationRoot: optStr("DELEGATE_TEST_ISOLATION_ROOT"),
  },
};

type Settings = Values<typeof SETTINGS>;

/** Variables whose values are secrets: an error names them but never shows the value. */
const SECRET_VARS = new Set(
  leavesOf(SETTINGS)
    .filter((l) => l.secret)
    .map((l) => l.env),
);

/** Every variable of the tree, in its order: what the settings file may set and status lists by source. */
const SETTING_NAMES = leavesOf(SETTINGS)
  .map((l) => l.env)
  .filter((n) => n.startsWith("DELEGATE_") && n !== "DELEGATE_TEST_ISOLATION_ROOT");

const BUCKET_VAR = /^DELEGATE_CONCURRENCY_([A-Z0-9_]+)$/;
const bucketSize = intRule(1, 1024);

const COMMAND_EXPECTS = "an absolute path, or npx (set by the npm package's launcher, not by hand)";

/**
 * DELEGATE_COMMAND: the command that started this dl when it is not the binary itself.
 * The npm package's `dl` is a script that execs the binary deep inside node_modules, so
 * process.execPath names a path no one types and an upgrade moves; the script passes its
 * own path (the bin link on PATH), or `npx` when it runs from npx's cache. What dl prints
 * for a person or a host to run (the registration line, watch commands) starts with it.
 */
function selfCommandOf(env: Record<string, string | undefined>): string | null {
  const value = env.DELEGATE_COMMAND;
  if (value === undefined || value === "") return null;
  if (value === "npx" || value.startsWith("/")) return value;
  throw configError("DELEGATE_COMMAND", value, COMMAND_EXPECTS);
}

/** What this module reads beside the tree (a family of variables, the test net, the platform's own), for docs/CONFIGURATION.md. */
export const READ_BESIDE_SETTINGS = [
  { env: "DELEGATE_CONCURRENCY_<BUCKET>", expects: intExpects(1, 1024) },
  { env: "DELEGATE_TEST_ISOLATION", expects: "present or not (any value, even empty, turns it on)" },
  { env: "DELEGATE_COMMAND", expects: COMMAND_EXPECTS },
  { env: "HOME", expects: "the user's home directory (required)" },
  { env: "XDG_CACHE_HOME", expects: "a folder (Linux)" },
  { env: "XDG_CONFIG_HOME", expects: "a folder (Linux)" },
  { env: "NO_COLOR", expects: "any non-empty value" },
  { env: "FORCE_COLOR", expects: "any value; 0 or false turn colour off" },
  { env: "TERM", expects: "dumb turns colour off" },
] as const;

function parseEnv(env: Record<string, string | undefined>, origin: Origins): Settings {
  const read = readTree(SETTINGS, tidyEnv(env));
  if (read.ok) return read.values;
  const { variable, expected } = read.refusal;
  throw configError(variable, env[variable], expected, origin);
}

/** DELEGATE_CONCURRENCY_<BUCKET>: pool sizes per bucket, beside the default size. */
function bucketOverrides(env: Record<string, string | undefined>, origin: Origins): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const [name, value] of Object.entries(env)) {
    const m = BUCKET_VAR.exec(name);
    if (!m || name === "DELEGATE_CONCURRENCY_DEFAULT") continue;
    const text = envText(value);
    if (text === undefined) continue;
    const parsed = bucketSize().safeParse(text);
    if (!parsed.success) throw configError(name, value, parsed.error.issues[0]!.message, origin);
    sizes[m[1]!] = parsed.data;
  }
  return sizes;
}

function statePaths(
  env: Record<string, string | undefined>,
  places: Settings["places"],
  facts: EnvFacts,
): StatePaths<ProviderName> {
  const { codexHome, claudeConfigDir, isolationRoot, ...overrides } = places;
  try {
    return resolveStatePaths({
      platform: facts.platform,
      cwd: facts.cwd,
      home: facts.home,
      xdgCacheHome: env.XDG_CACHE_HOME,
      xdgConfigHome: env.XDG_CONFIG_HOME,
      codexHome,
      claudeConfigDir,
      jobStores: PROVIDERS,
      overrides,
      isolation: env.DELEGATE_TEST_ISOLATION !== undefined,
      isolationRoot,
    });
  } catch (err) {
    if (err instanceof DlError) throw err;
    throw new DlError("bad_config", "the state directories could not be resolved");
  }
}

/**
 * Each provider needs its own state dir: one folder for two would merge their caps (the
 * same slot files) and show each provider's poll tool the other's jobs. Named by both
 * variables, whether a value was given or a default applied.
 */
function ownStateDirs(paths: StatePaths<ProviderName>, env: Record<string, string | undefined>): void {
  const seen = new Map<string, string>();
  for (const d of PROVIDERS) {
    const dir = paths.stateDirs[d.name];
    const earlier = seen.get(dir);
    if (earlier !== undefined) {
      const how = (v: string) => (env[v] ? v : `${v} (its default)`);
      throw new DlError(
        "bad_config",
        `${how(earlier)} and ${how(d.stateEnv)} are the same folder ${dir}; give each provider its own state dir`,
        { path: dir },
      );
    }
    seen.set(dir, d.stateEnv);
  }
}

/** What child processes inherit: the one policy in sys/child-env.ts, with dl's HOME. */
function childEnv(
  env: Record<string, string | undefined>,
  passthrough: readonly string[],
  home: string,
  paths: StatePaths,
) {
  const out = inheritedEnv(env, passthrough);
  out.HOME = home;
  // The isolation guard travels to children so a nested dl stays inside the root too.
  if (env.DELEGATE_TEST_ISOLATION !== undefined && paths.isolationRoot) {
    out.DELEGATE_TEST_ISOLATION = env.DELEGATE_TEST_ISOLATION;
    out.DELEGATE_TEST_ISOLATION_ROOT = paths.isolationRoot;
  }
  return out;
}

/**
 * Where the user's git reads its configuration besides the repository and HOME: the
 * XDG config dir, GIT_CONFIG_GLOBAL/SYSTEM and the GIT_CONFIG_COUNT/KEY_n/VALUE_n and
 * GIT_CONFIG_PARAMETERS entries. dl asks git what a repository's configuration names
 * (sandbox/git-reach.ts) with these, so a `core.hooksPath` or a driver set there is
 * protected as the host's git will run it. Only dl's own git questions get them (a value
 * may hold a credential: no delegate does).
 */
const readsGitConfig = (k: string) => k === "XDG_CONFIG_HOME" || GIT_CONFIG_SOURCE.test(k);

function gitConfigSources(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && readsGitConfig(k)) out[k] = v;
  return out;
}

/**
 * What a nested `dl run` (a submit_agent job) needs to build the same Config as this
 * process: the child policy plus dl's own settings (DELEGATE_*, gateway keys included)
 * and the XDG bases the state paths follow. Passed in the environment, never in argv.
 * DELEGATE_RUN_PROVIDER_* are one job's endpoint and key: only that job's launch sets them.
 * The variables whose names say credential, and those handed to Codex or dsh by name,
 * travel too, under their own names, so the child holds the same secrets and cuts them
 * out of every file it writes (sys/redact.ts); its own children get the allowlist, as ours do.
 */
function dlChildEnv(
  env: Record<string, string | undefined>,
  base: Record<string, string>,
  passedByName: readonly Record<string, string>[],
) {
  const out = { ...base, ...Object.assign({}, ...passedByName) };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k.startsWith("DELEGATE_RUN_PROVIDER_")) continue;
    if (k.startsWith("DELEGATE_") || k === "XDG_CACHE_HOME" || readsGitConfig(k) || isSecretName(k)) out[k] = v;
  }
  return out;
}

/**
 * What a job's supervisor (`dl supervise`, this same binary) needs to build the same
 * Config as this process: the environment this process was given, less
 * DELEGATE_RUN_PROVIDER_* (one job's endpoint and key, which only that job's supervisor
 * is handed). Its children get the allowlisted environments above, as this process's do.
 */
function supervisorEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith("DELEGATE_RUN_PROVIDER_")) out[k] = v;
  return out;
}

/**
 * Every secret this process holds by its settings (sys/redact.ts's rule): the values of
 * dl's secret settings, of every variable whose name says credential, and of the
 * variables handed by name to the Codex CLI and the dsh launcher (any name).
 */
function heldSecrets(env: Record<string, string | undefined>, passedByName: readonly Record<string, string>[]) {
  const own = [...SECRET_VARS].flatMap((name) => env[name] ?? []);
  return [...new Set([...own, ...secretValuesOf(env), ...passedByName.flatMap((e) => Object.values(e))])];
}

function buildConfig(env: Record<string, string | undefined>, facts: EnvFacts, origin: Origins) {
  const { places, ...settings } = parseEnv(env, origin);
  const paths = statePaths(env, places, facts);
  ownStateDirs(paths, env);
  const children = childEnv(env, settings.agent.envPassthrough, facts.home, paths);
  const codexNamed = namedEnv(env, settings.codex.envPassthrough);
  const dshNamed = namedEnv(env, settings.dsh.envPassthrough);
  return {
    ...settings,
    backend: { ...settings.backend, codingModel: settings.backend.codingModel ?? settings.backend.model },
    // DELEGATE_CONCURRENCY_<BUCKET>: names made from the bucket, read beside the tree.
    pools: { ...settings.pools, bucketOverrides: bucketOverrides(env, origin) },
    tools: settings.tools.map((t) => t.toLowerCase()),
    selfCommand: selfCommandOf(env),
    paths,
    /** The folder dl was started in (the session's project; a supervisor starts in its server's): the jail counts the configs above a workdir from there. */
    callerDir: facts.cwd,
    childEnv: children,
    /** What dl's own git questions run with: the child env plus where the user's git reads its config. */
    gitAskEnv: { ...children, ...gitConfigSources(env) },
    /**
     * What the Codex CLI gets: the common child env plus DELEGATE_CODEX_ENV_PASSTHROUGH
     * (its provider key, say). Nothing else receives these; status shows only the names.
     */
    codexChildEnv: { ...children, ...codexNamed },
    /** What the dsh launcher gets: the same, with DELEGATE_DSH_ENV_PASSTHROUGH instead. */
    dshChildEnv: { ...children, ...dshNamed },
    dlChildEnv: dlChildEnv(env, children, [codexNamed, dshNamed]),
    /** The secrets these settings hold: loadConfig makes them known to every channel's redaction. */
    secrets: heldSecrets(env, [codexNamed, dshNamed]),
    supervisorEnv: supervisorEnv(env),
    /** Where each setting came from: the settings file's path and state, and every variable's source. */
    settings: { file: origin.file, fileMode: origin.fileMode, sources: sourcesOf(origin, SETTING_NAMES) },
  };
}

export type Config = DeepReadonly<ReturnType<typeof buildConfig>>;

type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** Facts about the process that are not DELEGATE_* settings but shape the defaults. */
export type EnvFacts = { platform: NodeJS.Platform; cwd: string; home: string };

function configError(name: string, value: string | undefined, expected: string, origin?: Origins): DlError {
  const shown = value === undefined ? "unset" : SECRET_VARS.has(name) ? REDACTED : JSON.stringify(clip(value));
  const from = origin?.byName[name] === "file" ? ` (set in ${origin.file})` : "";
  return new DlError("bad_config", `${name}=${shown}${from} is invalid: expected ${expected}`, { variable: name });
}

function clip(s: string): string {
  // A URL's userinfo or a key in its query is a credential: never echo it, even in a rejection.
  const flat = redact(s).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, " ");
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/**
 * Parse an environment and the user's settings file (tests pass their own environment,
 * and `settingsText` instead of a file; production passes process.env).
 */
export function parseConfig(
  env: Record<string, string | undefined>,
  facts?: Partial<EnvFacts> & { settingsText?: string | null },
): Config {
  const home = facts?.home ?? env.HOME ?? "";
  if (!home) throw new DlError("bad_config", "HOME=unset is invalid: expected the user's home directory");
  const platform = facts?.platform ?? process.platform;
  const file = settingsFilePath({ platform, home, xdgConfigHome: env.XDG_CONFIG_HOME });
  const { effective, origin } = withSettingsFile(env, file, new Set(SETTING_NAMES), facts?.settingsText);
  return deepFreeze(buildConfig(effective, { platform, cwd: facts?.cwd ?? process.cwd(), home }, origin));
}

/**
 * The one place dl reads its own environment. The secrets it holds become known to the
 * redaction (sys/redact.ts) at once, before anything could print one.
 */
export function loadConfig(): Config {
  const config = parseConfig(process.env);
  knowSecrets(config.secrets);
  return config;
}

/**
 * Makes the secrets of this process's environment and of the settings file known to the
 * redaction before anything is checked: a refusal that echoes what it refused (a
 * mistyped flag, an unknown command, a bad setting's value) is printed before
 * loadConfig could learn them, and must not show a key. Best effort on purpose: a file
 * that cannot be read or parsed still gives what it can, and loadConfig, which refuses
 * such a file, adds the rest.
 */
export function knowSecretsEarly(): void {
  const env = process.env;
  let fromFile: Record<string, string> = {};
  try {
    const file = settingsFilePath({
      platform: process.platform,
      home: env.HOME ?? "",
      xdgConfigHome: env.XDG_CONFIG_HOME,
    });
    const read = readSettingsFile(file);
    if (read.state === "read") fromFile = Object.fromEntries(assignmentsAnyway(read.text));
  } catch {
    // No file, or none this user may read: loadConfig says so.
  }
  // The names handed to the Codex CLI and the dsh launcher, read loosely (a bad list is
  // loadConfig's to refuse): taking a word too many only learns one more value.
  const passNames = ["DELEGATE_CODEX_ENV_PASSTHROUGH", "DELEGATE_DSH_ENV_PASSTHROUGH"]
    .flatMap((n) => [fromFile[n], env[n]])
    .flatMap((v) => (v ?? "").split(/[\s,]+/).filter(Boolean));
  const passed = namedEnv({ ...fromFile, ...env }, passNames);
  // Both sources whole: a file value the environment overrides is still a key on disk.
  knowSecrets([...heldSecrets(fromFile, [passed]), ...heldSecrets(env, [])]);
}

/**
 * Whether people-facing output may be coloured, from the conventions every terminal tool
 * honours: NO_COLOR (any value) turns colour off, FORCE_COLOR turns it on (unless "0" or
 * "false"); otherwise colour follows whether the stream is a terminal. Read here because
 * this module is dl's only reader of the environment.
 */
export function colourPreference(): "never" | "always" | "auto" {
  if (process.env.NO_COLOR) return "never";
  const force = process.env.FORCE_COLOR;
  if (force !== undefined) return force === "0" || force === "false" ? "never" : "always";
  if (process.env.TERM === "dumb") return "never";
  return "auto";
}
