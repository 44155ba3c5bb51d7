import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Config, parseConfig } from "../../src/config.ts";
import type { JobCaps } from "../../src/config-tree.ts";
import { type CodexService, type CodexTuning, startJobs } from "../../src/jobs/providers/codex/service.ts";
import { type CodexVersionStatus, probeCodexVersion } from "../../src/jobs/providers/codex/version.ts";
import { type FakeResponses, type SeenRequest, type Step, startFakeResponses } from "../fixture/fake-responses.ts";

/**
 * The pinned real CLI (npm devDependency @openai/codex), as npm installs it: `codex` is a
 * node script that starts the native binary as its child. The tests about what a user's
 * npm install does (e2e/codex.test.ts, its orphans, the secret and attack suites) run it.
 */
export const CODEX_NPM_BIN = join(import.meta.dir, "../../node_modules/.bin/codex");

/** The platform packages the npm wrapper picks its native binary from, by target triple. */
const NATIVE: Record<string, [pkg: string, triple: string]> = {
  "linux-x64": ["@openai/codex-linux-x64", "x86_64-unknown-linux-musl"],
  "linux-arm64": ["@openai/codex-linux-arm64", "aarch64-unknown-linux-musl"],
  "darwin-x64": ["@openai/codex-darwin-x64", "x86_64-apple-darwin"],
  "darwin-arm64": ["@openai/codex-darwin-arm64", "aarch64-apple-darwin"],
};

/** The same CLI's native binary from the same npm install, or null when this platform has none. */
function nativeCodexBin(): string | null {
  const [pkg, triple] = NATIVE[`${process.platform}-${process.arch}`] ?? [];
  if (!pkg || !triple) return null;
  const bin = join(import.meta.dir, "../../node_modules", pkg, "vendor", triple, "bin", "codex");
  return existsSync(bin) ? bin : null;
}

/**
 * The pinned CLI's native binary: the program Homebrew and Codex's release archives put
 * on PATH, and the one the npm wrapper runs. Tests of dl's Codex provider run it directly:
 * the wrapper's node start was ~0.14 s of CPU per `codex` run here (of ~0.17 s).
 */
export const CODEX_BIN = nativeCodexBin() ?? CODEX_NPM_BIN;

/** The variable the fake provider's env_key names; the value is not a secret. */
const FAKE_TOKEN_VAR = "DL_FAKE_RESPONSES_TOKEN";

/**
 * A CODEX_HOME whose config.toml points the CLI at a fake Responses server through a
 * custom provider, with the CLI's own retries off so every failure reaches dl as is, and
 * its plugin marketplace off: at every start the CLI otherwise syncs OpenAI's curated
 * plugins from github.com (`git ls-remote https://github.com/openai/plugins.git HEAD`,
 * then a clone into CODEX_HOME/.tmp when the network is open), which a test of dl against
 * a local fake must not reach for, and which cost ~13% of each run's CPU with the network
 * closed (8 runs of `codex exec`: 2.38 s → 2.07 s). `plugins: true` leaves it on, as a
 * user's CODEX_HOME has it: e2e/codex.test.ts runs the CLI so, so the default stays tested.
 */
export function makeCodexHome(
  dir: string,
  baseUrl: string,
  envKey: string = FAKE_TOKEN_VAR,
  o: { plugins?: boolean } = {},
): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "config.toml"),
    [
      `model_provider = "fake"`,
      ``,
      `[model_providers.fake]`,
      `name = "fake responses"`,
      `base_url = "${baseUrl}"`,
      `env_key = "${envKey}"`,
      `wire_api = "responses"`,
      `request_max_retries = 0`,
      `stream_max_retries = 0`,
      ``,
      ...(o.plugins ? [] : [`[features]`, `plugins = false`, ``]),
    ].join("\n"),
  );
  return dir;
}

/** The variable the e2e tests' fake provider reads its bearer from (not a credential-looking name). */
const E2E_BEARER_VAR = "DL_FAKE_BEARER";

/**
 * What `dl serve` needs to run the real Codex CLI against a fake Responses server: a
 * CODEX_HOME pointing at it (in `root`), the pinned CLI, a state dir, and the fake
 * provider's bearer passed through like any variable a user lets through. TMPDIR is a
 * folder of its own, as a user's temp dir is not above their ~/.codex: under its temp
 * dir the CLI makes no sandbox helper and every command and patch of a workspace-write
 * run fails (see fake-responses.ts). `npm`: the CLI through npm's wrapper, not its native binary.
 */
export function codexServeEnv(
  root: string,
  baseUrl: string,
  stateDir: string,
  o: { plugins?: boolean; npm?: boolean } = {},
): Record<string, string> {
  const tmp = join(root, "tmp");
  mkdirSync(tmp, { recursive: true });
  return {
    TMPDIR: tmp,
    CODEX_HOME: makeCodexHome(join(root, "codex-home"), baseUrl, E2E_BEARER_VAR, o),
    DELEGATE_CODEX_BIN: o.npm ? CODEX_NPM_BIN : CODEX_BIN,
    DELEGATE_CODEX_STATE_DIR: stateDir,
    DELEGATE_ENV_PASSTHROUGH: E2E_BEARER_VAR,
    [E2E_BEARER_VAR]: "not-a-secret",
  };
}

/** What a job's child sees: a plain PATH (node for the npm wrapper), HOME, the token. */
export function codexChildEnv(home: string): Record<string, string> {
  return {
    PATH: `${join(import.meta.dir, "../../node_modules/.bin")}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    LANG: "C.UTF-8",
    [FAKE_TOKEN_VAR]: "fake-token-not-secret",
  };
}

/**
 * Simulates `codex login` rewriting the credentials. The shape is one the CLI parses
 * without tokens (a malformed file makes it exit with "failed to deserialize CLI auth"),
 * so a run against the fake still succeeds; `marker` makes each login's bytes differ.
 */
export function writeAuthJson(codexHome: string, marker: string): void {
  writeFileSync(
    join(codexHome, "auth.json"),
    JSON.stringify({ OPENAI_API_KEY: null, tokens: null, last_refresh: null, marker }),
    { mode: 0o600 },
  );
}

/** A rollout file as codex writes it, with one token_count event carrying rate limits. */
export function writeRollout(codexHome: string, day: string, name: string, lines: object[]): string {
  const [y, m, d] = day.split("-");
  const dir = join(codexHome, "sessions", y!, m!, d!);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `rollout-${day}T00-00-00-${name}.jsonl`);
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return file;
}

export function tokenCountEvent(at: Date, primaryPct: number, secondaryPct: number | null, resetInS = 3600): object {
  const resets = Math.floor(at.getTime() / 1000) + resetInS;
  return {
    timestamp: at.toISOString(),
    type: "event_msg",
    payload: {
      type: "token_count",
      info: { total_token_usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
      rate_limits: {
        limit_id: "codex",
        primary: { used_percent: primaryPct, window_minutes: 300, resets_at: resets },
        secondary:
          secondaryPct === null
            ? null
            : { used_percent: secondaryPct, window_minutes: 10080, resets_at: resets + 86400 },
      },
    },
  };
}

/** Routes a fake request by markers in the task text, so one fake serves many jobs. */
export function markerRouter(): (req: SeenRequest) => Step {
  const seenBy = new Map<string, number>();
  return (req) => {
    const m = /\[([a-z0-9]+)(?::([0-9.]+))?(?::([a-z0-9-]+))?\]/.exec(req.prompt);
    if (!m) return { kind: "ok" };
    const [, what, arg, key] = m;
    const k = `${what}:${key ?? ""}`;
    const count = (seenBy.get(k) ?? 0) + 1;
    seenBy.set(k, count);
    switch (what) {
      case "usage":
        return { kind: "usage_limit" };
      case "unauth":
        return { kind: "unauthorized" };
      case "hang":
        return { kind: "hang" };
      case "slow":
        return { kind: "ok", delayMs: Number(arg ?? 300) };
      case "edit": // adds codex.txt in the workdir through Codex's own tools, after arg ms
        return { kind: "edit", file: "codex.txt", content: "written by codex\n", delayMs: Number(arg ?? 0) };
      case "rl":
        return { kind: "ok", rateLimits: { primaryPct: 20, secondaryPct: Number(arg ?? 91) } };
      case "throttle": // the first N requests of this key are throttled (HTTP 429, no hint)
        return count <= Number(arg ?? 1) ? { kind: "throttle_http" } : { kind: "ok" };
      case "throttlehint": // same, through a failed stream that says "try again in 0.3s"
        return count <= Number(arg ?? 1) ? { kind: "throttle_sse", retryInS: 0.3 } : { kind: "ok" };
      case "throttleall":
        return { kind: "throttle_http" };
      default:
        return { kind: "ok" };
    }
  };
}

export interface CodexRig {
  fake: FakeResponses;
  codexHome: string;
  stateDir: string;
  home: string;
  /** The Config the service was built from (`dl status` reads the same). */
  config: Config;
  service: CodexService;
  stop(): Promise<void>;
}

/** What a rig may change: settings (as the variables a user sets) and the test-only tuning. */
export interface CodexRigOptions {
  bin?: string;
  stateDir?: string;
  codexHome?: string;
  quotaRefusePct?: number;
  caps?: JobCaps;
  backoffS?: CodexTuning["backoffS"];
  accountTuning?: CodexTuning["account"];
}

/**
 * What the pinned CLI answers to `--version`, asked once per test process: every rig on
 * it would start the same `codex --version` (node + the native binary, ~0.08 s CPU) to
 * learn the same thing. Only a good answer is kept (as CodexVersionGate keeps it); rigs
 * with another bin (a missing or too-old CLI) probe for themselves, as dl does.
 */
let pinnedVersion: CodexVersionStatus | null = null;
async function pinnedVersionProbe(env: Readonly<Record<string, string>>): Promise<CodexVersionStatus> {
  if (pinnedVersion) return pinnedVersion;
  const s = await probeCodexVersion(CODEX_BIN, env);
  if (s.ok) pinnedVersion = s;
  return s;
}

/**
 * A Codex job service on its own state dir and CODEX_HOME, built from a Config as
 * `dl serve` builds it, running the real CLI against a fake.
 */
export async function startCodexRig(dir: string, over: CodexRigOptions = {}, fake?: FakeResponses): Promise<CodexRig> {
  const f = fake ?? startFakeResponses(markerRouter());
  const home = join(dir, "home");
  const codexHome = over.codexHome ?? makeCodexHome(join(home, ".codex"), f.baseUrl);
  const stateDir = over.stateDir ?? join(dir, "state");
  mkdirSync(stateDir, { recursive: true });
  const caps = over.caps ?? { maxConcurrent: 4, maxPerProject: 2, maxQueue: 32, staggerS: 0 };
  const env = {
    ...codexChildEnv(home),
    CODEX_HOME: codexHome,
    DELEGATE_CODEX_BIN: over.bin ?? CODEX_BIN,
    DELEGATE_CODEX_STATE_DIR: stateDir,
    // The fake provider's token reaches the Codex child the way a user's key does.
    DELEGATE_CODEX_ENV_PASSTHROUGH: FAKE_TOKEN_VAR,
    DELEGATE_CODEX_MAX_CONCURRENT: String(caps.maxConcurrent),
    DELEGATE_CODEX_MAX_PER_PROJECT: String(caps.maxPerProject),
    DELEGATE_CODEX_MAX_QUEUE: String(caps.maxQueue),
    DELEGATE_CODEX_STAGGER_S: String(caps.staggerS),
    ...(over.quotaRefusePct === undefined ? {} : { DELEGATE_CODEX_QUOTA_REFUSE_PCT: String(over.quotaRefusePct) }),
  };
  const config = parseConfig(env, { home, cwd: dir });
  const service = await startJobs(
    config,
    { stateDir, waitCommand: "dl wait", baseDir: dir, engine: { tickMs: 50, graceMs: 500 } },
    {
      backoffS: over.backoffS ?? [0.2, 0.4, 0.8, 1.6, 2],
      account: over.accountTuning,
      quotaTtlMs: 0,
      versionProbe: over.bin === undefined ? () => pinnedVersionProbe(config.codexChildEnv) : undefined,
    },
  );
  return {
    fake: f,
    codexHome,
    stateDir,
    home,
    config,
    service,
    async stop() {
      await service.stop();
      if (!fake) await f.stop();
    },
  };
}
