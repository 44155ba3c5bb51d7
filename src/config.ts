import type { z } from "zod";
import { redactUrl } from "./backends/url.ts";
import {
  envBool,
  envDefaults,
  envEnum,
  envInt,
  envList,
  envNumber,
  envObject,
  envOptionalString,
  envString,
  envText,
  envUrl,
  tidyEnv,
} from "./config-fields.ts";
import { DlError } from "./errors.ts";
import { codexPassthroughProblem, inheritedEnv, namedEnv, passthroughProblem } from "./sys/child-env.ts";
import { resolveStatePaths, type StatePaths } from "./sys/paths.ts";

/**
 * Every DELEGATE_* variable dl understands, parsed by one schema (built for the variables
 * an environment sets, see config-fields.ts). This module is the only
 * reader of process.env: everything else receives the frozen Config.
 */

/** Read only when DELEGATE_GATEWAY=bifrost: a LiteLLM user's stray Bifrost settings stop nothing. */
const BIFROST_FIELDS = {
  DELEGATE_BIFROST_URL: envUrl(undefined),
  DELEGATE_BIFROST_LOCAL_URL: envUrl(undefined),
  DELEGATE_BIFROST_API: envEnum(["litellm", "openai"], "litellm"),
  DELEGATE_BIFROST_VK_LOCAL: envString(""),
  DELEGATE_BIFROST_VK_CODE: envString(""),
};
/** The main fields keep their raw text so the refinement below can parse them on demand. */
const rawBifrost = Object.fromEntries(Object.keys(BIFROST_FIELDS).map((k) => [k, envOptionalString()])) as {
  [K in keyof typeof BIFROST_FIELDS]: ReturnType<typeof envOptionalString>;
};

const passthroughList = envList(/^\S+$/, "environment variable names", passthroughProblem);

/** Exact names for one CLI's child only (Codex, the dsh launcher); credentials allowed (its provider key). */
const cliPassthroughList = envList(/^\S+$/, "environment variable names", codexPassthroughProblem);

const FIELDS = {
  // Gateway and backend
  DELEGATE_GATEWAY: envEnum(["litellm", "bifrost"], "litellm"),
  DELEGATE_LOCAL_URL: envUrl("http://localhost:4000/v1/messages"),
  DELEGATE_LOCAL_KEY: envString(""),
  DELEGATE_LOCAL_MODEL: envString("local-qwen-3-6-35b"),
  DELEGATE_LOCAL_CODING_MODEL: envOptionalString(),
  DELEGATE_LOCAL_AGENTS_DIR: envOptionalString(),
  ...rawBifrost,
  DELEGATE_STREAMING: envBool(true),
  DELEGATE_RESEND_REASONING: envEnum(["auto", "1", "0"], "auto"),
  DELEGATE_PROMPT_CACHING: envBool(true),
  DELEGATE_HTTP_TIMEOUT: envNumber(1800, 1, 86_400),
  DELEGATE_DISPATCH_TIMEOUT: envNumber(7200, 1, 7 * 86_400),
  DELEGATE_PROVIDER_ALLOW_HOSTS: envList(/^[A-Za-z0-9.:\-_[\]/]+$/, "host names or IP addresses"),
  // Agent loop
  DELEGATE_MAX_TURNS_LOCAL: envInt(25, 1, 40),
  DELEGATE_MAX_TURNS_CLOUD: envInt(25, 1, 40),
  DELEGATE_MAX_NUDGES: envInt(2, 0, 10),
  DELEGATE_KEEP_TOOL_RESULTS: envInt(2, 1, 1000),
  DELEGATE_CONTEXT_BUDGET: envInt(200_000, 1, 100_000_000),
  DELEGATE_MAX_BATCH_SIZE: envInt(4, 1, 64),
  DELEGATE_RUN_BASH: envBool(true),
  DELEGATE_RUN_BASH_TIMEOUT: envNumber(120, 1, 86_400),
  DELEGATE_RUN_BASH_SANDBOX: envBool(false),
  DELEGATE_MAX_BASH_CONCURRENT: envInt(4, 1, 256),
  DELEGATE_ALLOW_PATH_ESCAPE: envBool(false),
  DELEGATE_ENV_PASSTHROUGH: passthroughList,
  // Pools and failover
  DELEGATE_CONCURRENCY_DEFAULT: envInt(6, 1, 1024),
  DELEGATE_FAILOVER_GRACE: envNumber(10, 0, 3600),
  DELEGATE_QUEUE_GRACE: envNumber(600, 0, 86_400),
  DELEGATE_FAILOVER_CHAINS: envOptionalString(),
  DELEGATE_CACHE_DIR: envOptionalString(),
  // MCP surface: which backends' tools tools/list names (empty: those that can run here)
  DELEGATE_TOOLS: envList(/^(?:all|agent|codex|gemini|dsh)$/i, "backends (agent, codex, gemini, dsh) or all"),
  // Codex
  DELEGATE_CODEX_BIN: envString("codex"),
  DELEGATE_CODEX_MODEL: envString("gpt-6.1-terra"),
  DELEGATE_CODEX_MAX_CONCURRENT: envInt(8, 1, 256),
  DELEGATE_CODEX_MAX_PER_PROJECT: envInt(6, 1, 256),
  DELEGATE_CODEX_MAX_QUEUE: envInt(32, 0, 10_000),
  DELEGATE_CODEX_STAGGER_S: envNumber(2.5, 0, 600),
  DELEGATE_CODEX_STATE_DIR: envOptionalString(),
  DELEGATE_CODEX_ALLOW_DANGER: envBool(false),
  DELEGATE_CODEX_QUOTA_WARN: envNumber(85, 0, 100),
  DELEGATE_CODEX_QUOTA_REFUSE_PCT: envNumber(undefined, 0, 100),
  DELEGATE_CODEX_ENV_PASSTHROUGH: cliPassthroughList,
  CODEX_HOME: envOptionalString(),
  // Gemini through Antigravity `agy`
  DELEGATE_AGY_BIN: envString("agy"),
  DELEGATE_GEMINI_MAX_CONCURRENT: envInt(4, 1, 256),
  DELEGATE_GEMINI_MAX_QUEUE: envInt(32, 0, 10_000),
  DELEGATE_GEMINI_STATE_DIR: envOptionalString(),
  DELEGATE_GEMINI_ALLOW_DANGER: envBool(false),
  // DeepSeek-harness launcher
  DELEGATE_DSH_LAUNCHER: envString("dsh-herdr.sh"),
  DELEGATE_DSH_STATE_DIR: envOptionalString(),
  DELEGATE_DSH_MAX_CONCURRENT: envInt(2, 1, 256),
  DELEGATE_DSH_MAX_PER_PROJECT: envInt(2, 1, 256),
  DELEGATE_DSH_MAX_QUEUE: envInt(16, 0, 10_000),
  DELEGATE_DSH_STAGGER_S: envNumber(5, 0, 600),
  DELEGATE_DSH_MODELS_FILE: envOptionalString(),
  DELEGATE_DSH_ENV_PASSTHROUGH: cliPassthroughList,
  // Background agent jobs (submit_agent): each one a child `dl run`
  DELEGATE_AGENT_STATE_DIR: envOptionalString(),
  DELEGATE_AGENT_MAX_CONCURRENT: envInt(4, 1, 256),
  DELEGATE_AGENT_MAX_PER_PROJECT: envInt(4, 1, 256),
  DELEGATE_AGENT_MAX_QUEUE: envInt(32, 0, 10_000),
  // Watcher and housekeeping
  DELEGATE_WAIT_INTERVAL: envNumber(5, 0.05, 3600),
  DELEGATE_JOB_RETENTION_DAYS: envNumber(7, 0, 3650),
  DELEGATE_LOG_LEVEL: envEnum(["silent", "error", "warn", "info", "debug"], "info"),
  // Test safety net: presence (even empty) turns it on, so it is read separately.
  DELEGATE_TEST_ISOLATION_ROOT: envOptionalString(),
};

type Fields = z.output<ReturnType<typeof envObject<typeof FIELDS>>>;
type RefineCtx = z.core.$RefinementCtx<Fields>;

/** A per-project cap above the global cap could never be reached: refuse it by name. */
function perProjectWithinGlobal(e: Fields, ctx: RefineCtx): void {
  const pairs = [
    ["DELEGATE_CODEX_MAX_PER_PROJECT", "DELEGATE_CODEX_MAX_CONCURRENT"],
    ["DELEGATE_DSH_MAX_PER_PROJECT", "DELEGATE_DSH_MAX_CONCURRENT"],
    ["DELEGATE_AGENT_MAX_PER_PROJECT", "DELEGATE_AGENT_MAX_CONCURRENT"],
  ] as const;
  for (const [perProject, global] of pairs) {
    if (e[perProject] > e[global]) {
      ctx.addIssue({
        code: "custom",
        path: [perProject],
        message: `a value > 0 and <= ${global} (${e[global]})`,
      });
    }
  }
}

/** The Bifrost variables are checked only when Bifrost is the gateway. */
function bifrostWhenChosen(e: Fields, ctx: RefineCtx): void {
  if (e.DELEGATE_GATEWAY !== "bifrost") return;
  const parsed = envObject(BIFROST_FIELDS, e).safeParse(e);
  for (const issue of parsed.error?.issues ?? []) {
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
  if (parsed.success && !parsed.data.DELEGATE_BIFROST_URL) {
    ctx.addIssue({
      code: "custom",
      path: ["DELEGATE_BIFROST_URL"],
      message: "the Bifrost base URL when DELEGATE_GATEWAY=bifrost",
    });
  }
}

/** The one schema of an environment (config-fields.ts: built from the variables it sets). */
function envSchema(env: Record<string, unknown>) {
  return envObject(FIELDS, env)
    .superRefine((e, ctx) => {
      perProjectWithinGlobal(e, ctx);
      bifrostWhenChosen(e, ctx);
    })
    .transform((e) => ({
      ...e,
      bifrost: e.DELEGATE_GATEWAY === "bifrost" ? envObject(BIFROST_FIELDS, e).parse(e) : envDefaults(BIFROST_FIELDS),
    }));
}

type Env = z.output<ReturnType<typeof envSchema>>;

/** Variables whose values are secrets: an error names them but never shows the value. */
const SECRET_VARS = new Set(["DELEGATE_LOCAL_KEY", "DELEGATE_BIFROST_VK_LOCAL", "DELEGATE_BIFROST_VK_CODE"]);

const BUCKET_VAR = /^DELEGATE_CONCURRENCY_([A-Z0-9_]+)$/;
const BucketSize = envInt(undefined, 1, 1024);

function parseEnv(env: Record<string, string | undefined>): Env {
  const tidy = tidyEnv(env);
  const parsed = envSchema(tidy).safeParse(tidy);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = String(issue.path[0] ?? "environment");
  throw configError(name, env[name], issue.message);
}

/** DELEGATE_CONCURRENCY_<BUCKET>: pool sizes per bucket, beside the default size. */
function bucketOverrides(env: Record<string, string | undefined>): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const [name, value] of Object.entries(env)) {
    const m = BUCKET_VAR.exec(name);
    if (!m || name === "DELEGATE_CONCURRENCY_DEFAULT") continue;
    const text = envText(value);
    if (text === undefined) continue;
    const parsed = BucketSize.rule().safeParse(text);
    if (!parsed.success) throw configError(name, value, parsed.error.issues[0]!.message);
    sizes[m[1]!] = parsed.data;
  }
  return sizes;
}

function statePaths(env: Record<string, string | undefined>, e: Env, facts: EnvFacts): StatePaths {
  try {
    return resolveStatePaths({
      platform: facts.platform,
      cwd: facts.cwd,
      home: facts.home,
      xdgCacheHome: env.XDG_CACHE_HOME,
      xdgConfigHome: env.XDG_CONFIG_HOME,
      codexHome: e.CODEX_HOME,
      overrides: {
        agentsDir: e.DELEGATE_LOCAL_AGENTS_DIR,
        cacheDir: e.DELEGATE_CACHE_DIR,
        codexStateDir: e.DELEGATE_CODEX_STATE_DIR,
        geminiStateDir: e.DELEGATE_GEMINI_STATE_DIR,
        dshStateDir: e.DELEGATE_DSH_STATE_DIR,
        agentStateDir: e.DELEGATE_AGENT_STATE_DIR,
        dshModelsFile: e.DELEGATE_DSH_MODELS_FILE,
      },
      isolation: env.DELEGATE_TEST_ISOLATION !== undefined,
      isolationRoot: e.DELEGATE_TEST_ISOLATION_ROOT,
    });
  } catch (err) {
    if (err instanceof DlError) throw err;
    throw new DlError("bad_config", "the state directories could not be resolved");
  }
}

/** What child processes inherit: the one policy in sys/child-env.ts, with dl's HOME. */
function childEnv(env: Record<string, string | undefined>, e: Env, home: string, paths: StatePaths) {
  const out = inheritedEnv(env, e.DELEGATE_ENV_PASSTHROUGH);
  out.HOME = home;
  // The isolation guard travels to children so a nested dl stays inside the root too.
  if (env.DELEGATE_TEST_ISOLATION !== undefined && paths.isolationRoot) {
    out.DELEGATE_TEST_ISOLATION = env.DELEGATE_TEST_ISOLATION;
    out.DELEGATE_TEST_ISOLATION_ROOT = paths.isolationRoot;
  }
  return out;
}

function gatewaySection(e: Env) {
  const b = e.bifrost;
  return {
    kind: e.DELEGATE_GATEWAY,
    localUrl: e.DELEGATE_LOCAL_URL,
    bifrostUrl: b.DELEGATE_BIFROST_URL,
    bifrostLocalUrl: b.DELEGATE_BIFROST_LOCAL_URL,
    bifrostApi: b.DELEGATE_BIFROST_API,
    vkLocal: b.DELEGATE_BIFROST_VK_LOCAL,
    vkCode: b.DELEGATE_BIFROST_VK_CODE,
  };
}

function backendSection(e: Env) {
  return {
    key: e.DELEGATE_LOCAL_KEY,
    model: e.DELEGATE_LOCAL_MODEL,
    codingModel: e.DELEGATE_LOCAL_CODING_MODEL ?? e.DELEGATE_LOCAL_MODEL,
    streaming: e.DELEGATE_STREAMING,
    resendReasoning: e.DELEGATE_RESEND_REASONING,
    promptCaching: e.DELEGATE_PROMPT_CACHING,
    httpTimeoutS: e.DELEGATE_HTTP_TIMEOUT,
    dispatchTimeoutS: e.DELEGATE_DISPATCH_TIMEOUT,
    providerAllowHosts: e.DELEGATE_PROVIDER_ALLOW_HOSTS,
  };
}

function agentSection(e: Env) {
  return {
    maxTurnsLocal: e.DELEGATE_MAX_TURNS_LOCAL,
    maxTurnsCloud: e.DELEGATE_MAX_TURNS_CLOUD,
    maxNudges: e.DELEGATE_MAX_NUDGES,
    keepToolResults: e.DELEGATE_KEEP_TOOL_RESULTS,
    contextBudgetChars: e.DELEGATE_CONTEXT_BUDGET,
    maxBatchSize: e.DELEGATE_MAX_BATCH_SIZE,
    runBash: e.DELEGATE_RUN_BASH,
    runBashTimeoutS: e.DELEGATE_RUN_BASH_TIMEOUT,
    runBashSandbox: e.DELEGATE_RUN_BASH_SANDBOX,
    maxBashConcurrent: e.DELEGATE_MAX_BASH_CONCURRENT,
    allowPathEscape: e.DELEGATE_ALLOW_PATH_ESCAPE,
    envPassthrough: e.DELEGATE_ENV_PASSTHROUGH,
  };
}

/**
 * What a nested `dl run` (a submit_agent job) needs to build the same Config as this
 * process: the child policy plus dl's own settings (DELEGATE_*, gateway keys included)
 * and the XDG bases the state paths follow. Passed in the environment, never in argv.
 */
function dlChildEnv(env: Record<string, string | undefined>, base: Record<string, string>) {
  const out = { ...base };
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (k.startsWith("DELEGATE_") || k === "XDG_CACHE_HOME" || k === "XDG_CONFIG_HOME")) out[k] = v;
  }
  return out;
}

/** The CLI job providers: Codex, Gemini through `agy`, the DeepSeek-harness launcher. */
function providerSections(e: Env) {
  return {
    codex: {
      bin: e.DELEGATE_CODEX_BIN,
      model: e.DELEGATE_CODEX_MODEL,
      maxConcurrent: e.DELEGATE_CODEX_MAX_CONCURRENT,
      maxPerProject: e.DELEGATE_CODEX_MAX_PER_PROJECT,
      maxQueue: e.DELEGATE_CODEX_MAX_QUEUE,
      staggerS: e.DELEGATE_CODEX_STAGGER_S,
      allowDanger: e.DELEGATE_CODEX_ALLOW_DANGER,
      quotaWarnPct: e.DELEGATE_CODEX_QUOTA_WARN,
      quotaRefusePct: e.DELEGATE_CODEX_QUOTA_REFUSE_PCT,
      /** Names only (status shows them); the values live in Config.codexChildEnv. */
      envPassthrough: e.DELEGATE_CODEX_ENV_PASSTHROUGH,
    },
    gemini: {
      bin: e.DELEGATE_AGY_BIN,
      maxConcurrent: e.DELEGATE_GEMINI_MAX_CONCURRENT,
      maxQueue: e.DELEGATE_GEMINI_MAX_QUEUE,
      allowDanger: e.DELEGATE_GEMINI_ALLOW_DANGER,
    },
    dsh: {
      launcher: e.DELEGATE_DSH_LAUNCHER,
      maxConcurrent: e.DELEGATE_DSH_MAX_CONCURRENT,
      maxPerProject: e.DELEGATE_DSH_MAX_PER_PROJECT,
      maxQueue: e.DELEGATE_DSH_MAX_QUEUE,
      staggerS: e.DELEGATE_DSH_STAGGER_S,
      /** Names only (status shows them); the values live in Config.dshChildEnv. */
      envPassthrough: e.DELEGATE_DSH_ENV_PASSTHROUGH,
    },
    agentJobs: {
      maxConcurrent: e.DELEGATE_AGENT_MAX_CONCURRENT,
      maxPerProject: e.DELEGATE_AGENT_MAX_PER_PROJECT,
      maxQueue: e.DELEGATE_AGENT_MAX_QUEUE,
    },
  };
}

function buildConfig(env: Record<string, string | undefined>, facts: EnvFacts) {
  const e = parseEnv(env);
  const pools = {
    defaultSize: e.DELEGATE_CONCURRENCY_DEFAULT,
    bucketOverrides: bucketOverrides(env),
    failoverGraceS: e.DELEGATE_FAILOVER_GRACE,
    queueGraceS: e.DELEGATE_QUEUE_GRACE,
    failoverChains: e.DELEGATE_FAILOVER_CHAINS,
  };
  const paths = statePaths(env, e, facts);
  const children = childEnv(env, e, facts.home, paths);
  return {
    gateway: gatewaySection(e),
    backend: backendSection(e),
    agent: agentSection(e),
    pools,
    ...providerSections(e),
    /** Backends whose tools are listed whatever this machine has (`all`, or names); empty: the usable ones. */
    tools: e.DELEGATE_TOOLS.map((t) => t.toLowerCase()),
    watcher: { intervalS: e.DELEGATE_WAIT_INTERVAL },
    jobs: { retentionDays: e.DELEGATE_JOB_RETENTION_DAYS },
    logLevel: e.DELEGATE_LOG_LEVEL,
    paths,
    childEnv: children,
    /**
     * What the Codex CLI gets: the common child env plus DELEGATE_CODEX_ENV_PASSTHROUGH
     * (its provider key, say). Nothing else receives these; status shows only the names.
     */
    codexChildEnv: { ...children, ...namedEnv(env, e.DELEGATE_CODEX_ENV_PASSTHROUGH) },
    /** What the dsh launcher gets: the same, with DELEGATE_DSH_ENV_PASSTHROUGH instead. */
    dshChildEnv: { ...children, ...namedEnv(env, e.DELEGATE_DSH_ENV_PASSTHROUGH) },
    dlChildEnv: dlChildEnv(env, children),
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

function configError(name: string, value: string | undefined, expected: string): DlError {
  const shown = value === undefined ? "unset" : SECRET_VARS.has(name) ? "<redacted>" : JSON.stringify(clip(value));
  return new DlError("bad_config", `${name}=${shown} is invalid: expected ${expected}`, { variable: name });
}

function clip(s: string): string {
  // A URL's userinfo or a key in its query is a credential: never echo it, even in a rejection.
  const flat = redactUrl(s).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, " ");
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

/** Parse an environment (tests pass their own; production passes process.env). */
export function parseConfig(env: Record<string, string | undefined>, facts?: Partial<EnvFacts>): Config {
  const home = facts?.home ?? env.HOME ?? "";
  if (!home) throw new DlError("bad_config", "HOME=unset is invalid: expected the user's home directory");
  return deepFreeze(
    buildConfig(env, {
      platform: facts?.platform ?? process.platform,
      cwd: facts?.cwd ?? process.cwd(),
      home,
    }),
  );
}

/** The one place dl reads its own environment. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}

/** Names of secret-bearing settings, for redaction in status output. */
export const REDACTED = "<redacted>";

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
