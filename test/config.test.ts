import { describe, expect, test } from "bun:test";
import { parseConfig } from "../src/config.ts";
import { runProviderTarget } from "../src/dispatch/provider-endpoint.ts";
import { isDlError } from "../src/errors.ts";

const base = () => ({ ...process.env }) as Record<string, string | undefined>;

function errorOf(env: Record<string, string | undefined>): string {
  try {
    parseConfig(env);
  } catch (e) {
    if (isDlError(e, "bad_config")) return e.message;
    throw e;
  }
  throw new Error("expected a config error");
}

describe("config", () => {
  test("defaults follow the reference", () => {
    const c = parseConfig(base());
    expect(c.gateway.kind).toBe("litellm");
    expect(c.gateway.localUrl).toBe("http://localhost:4000/v1/messages");
    expect(c.backend.model).toBe("local-qwen-3-6-35b");
    expect(c.backend.codingModel).toBe("local-qwen-3-6-35b");
    expect(c.codex.caps.maxConcurrent).toBe(8);
    expect(c.codex.caps.maxPerProject).toBe(6);
    expect(c.codex.caps.maxQueue).toBe(32);
    expect(c.codex.caps.staggerS).toBe(2.5);
    expect(c.codex.model).toBe("gpt-6.1-terra");
    expect(c.dsh.caps.maxConcurrent).toBe(2);
    expect(c.watcher.intervalS).toBe(5);
    expect(c.agent.keepToolResults).toBe(2);
    expect(c.agent.contextBudgetChars).toBe(200_000);
    expect(c.agent.runBashTimeoutS).toBe(120);
    expect(c.pools.failoverGraceS).toBe(10);
    expect(c.backend.resendReasoning).toBe("auto");
  });

  test("is frozen all the way down", () => {
    const c = parseConfig(base());
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.codex)).toBe(true);
    expect(() => {
      (c.codex.caps as { maxConcurrent: number }).maxConcurrent = 99;
    }).toThrow();
  });

  test("an unknown gateway names the variable, the value and what is allowed", () => {
    expect(errorOf({ ...base(), DELEGATE_GATEWAY: "nope" })).toBe(
      'DELEGATE_GATEWAY="nope" is invalid: expected one of litellm, bifrost',
    );
  });

  test("a non-numeric cap is refused", () => {
    expect(errorOf({ ...base(), DELEGATE_CODEX_MAX_CONCURRENT: "lots" })).toContain(
      'DELEGATE_CODEX_MAX_CONCURRENT="lots"',
    );
  });

  test("per-project cap must not exceed the global cap", () => {
    const msg = errorOf({ ...base(), DELEGATE_CODEX_MAX_CONCURRENT: "4", DELEGATE_CODEX_MAX_PER_PROJECT: "5" });
    expect(msg).toContain("DELEGATE_CODEX_MAX_PER_PROJECT");
    expect(msg).toContain("<= DELEGATE_CODEX_MAX_CONCURRENT (4)");
    expect(errorOf({ ...base(), DELEGATE_CODEX_MAX_PER_PROJECT: "0" })).toContain("from 1");
  });

  test("bad URLs and bifrost without a URL fail", () => {
    expect(errorOf({ ...base(), DELEGATE_LOCAL_URL: "ftp://x/v1/messages" })).toContain("not http(s)");
    expect(errorOf({ ...base(), DELEGATE_GATEWAY: "bifrost" })).toContain("DELEGATE_BIFROST_URL=unset");
    expect(errorOf({ ...base(), DELEGATE_GATEWAY: "bifrost", DELEGATE_BIFROST_URL: "http://u:p@h:1" })).toContain(
      "credentials in the URL",
    );
  });

  test("credential-looking passthrough names are refused", () => {
    const msg = errorOf({ ...base(), DELEGATE_ENV_PASSTHROUGH: "FOO,OPENAI_API_KEY" });
    expect(msg).toContain("OPENAI_API_KEY is refused");
  });

  test("bucket overrides are parsed and checked", () => {
    const c = parseConfig({ ...base(), DELEGATE_CONCURRENCY_GLM_CODING_PLAN: "4" });
    expect(c.pools.bucketOverrides.GLM_CODING_PLAN).toBe(4);
    expect(errorOf({ ...base(), DELEGATE_CONCURRENCY_LOCAL_: "x" })).toContain("DELEGATE_CONCURRENCY_LOCAL_");
  });

  test("empty values count as unset", () => {
    const c = parseConfig({ ...base(), DELEGATE_CODEX_MAX_CONCURRENT: "", DELEGATE_GATEWAY: " " });
    expect(c.codex.caps.maxConcurrent).toBe(8);
    expect(c.gateway.kind).toBe("litellm");
  });

  test("child env is allowlisted and never carries the key", () => {
    const c = parseConfig({
      ...base(),
      DELEGATE_LOCAL_KEY: "sk-secret",
      MY_TOOL_HOME: "/x",
      DELEGATE_ENV_PASSTHROUGH: "MY_TOOL_HOME",
    });
    expect(c.childEnv.MY_TOOL_HOME).toBe("/x");
    expect(JSON.stringify(c.childEnv)).not.toContain("sk-secret");
    expect(c.childEnv.PATH).toBe(process.env.PATH!);
    expect(c.childEnv.DELEGATE_LOCAL_KEY).toBeUndefined();
  });

  test("a nested dl run (agent jobs) gets dl's own settings and the secrets dl holds, to redact them; its commands get none", () => {
    const c = parseConfig({
      ...base(),
      DELEGATE_LOCAL_KEY: "sk-secret",
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9/v1",
      OPENAI_API_KEY: "sk-other",
      XDG_CONFIG_HOME: "/tmp/xdg-config",
    });
    expect(c.dlChildEnv.DELEGATE_LOCAL_KEY).toBe("sk-secret");
    expect(c.dlChildEnv.DELEGATE_LOCAL_URL).toBe("http://127.0.0.1:9/v1");
    expect(c.dlChildEnv.XDG_CONFIG_HOME).toBe("/tmp/xdg-config");
    // A secret by its name: the nested dl holds it too, so it cuts it from what it writes.
    expect(c.dlChildEnv.OPENAI_API_KEY).toBe("sk-other");
    expect(c.dlChildEnv.PATH).toBe(c.childEnv.PATH);
    expect([...c.secrets].sort()).toEqual(["sk-other", "sk-secret"]);
    // The agent's own commands still never see either, in this dl or in the nested one.
    expect(c.childEnv.DELEGATE_LOCAL_KEY).toBeUndefined();
    const nested = parseConfig(c.dlChildEnv);
    expect([...nested.secrets].sort()).toEqual(["sk-other", "sk-secret"]);
    expect(nested.childEnv.OPENAI_API_KEY).toBeUndefined();
    expect(nested.childEnv.DELEGATE_LOCAL_KEY).toBeUndefined();
  });

  test("one job's provider endpoint (DELEGATE_RUN_PROVIDER_*) is read by dl run and never passed on to a nested dl", () => {
    const c = parseConfig({
      ...base(),
      DELEGATE_RUN_PROVIDER_URL: "http://127.0.0.1:9/v1/messages",
      DELEGATE_RUN_PROVIDER_KEY: "sk-one-job",
      DELEGATE_RUN_PROVIDER_FORMAT: "anthropic",
    });
    expect(runProviderTarget(c.backend.runProvider)).toEqual({
      url: "http://127.0.0.1:9/v1/messages",
      apiKey: "sk-one-job",
      format: "anthropic",
    });
    // A server started with them set must not send every agent job to that endpoint.
    expect(Object.keys(c.dlChildEnv).filter((k) => k.startsWith("DELEGATE_RUN_PROVIDER_"))).toEqual([]);
    expect(JSON.stringify(c.childEnv)).not.toContain("sk-one-job");
    expect(runProviderTarget(parseConfig(base()).backend.runProvider)).toBeNull();
  });

  test("agent job caps: defaults, and a per-project cap above the global one is refused", () => {
    const c = parseConfig(base());
    expect(c.agentJobs.caps).toEqual({ maxConcurrent: 4, maxPerProject: 4, maxQueue: 32, staggerS: 0 });
    const msg = errorOf({ ...base(), DELEGATE_AGENT_MAX_CONCURRENT: "2", DELEGATE_AGENT_MAX_PER_PROJECT: "3" });
    expect(msg).toContain("DELEGATE_AGENT_MAX_PER_PROJECT");
  });

  test("test isolation refuses state outside its root", () => {
    const msg = errorOf({ ...base(), DELEGATE_CODEX_STATE_DIR: "/var/tmp/elsewhere-codex-jobs" });
    expect(msg).toContain("DELEGATE_CODEX_STATE_DIR resolves outside DELEGATE_TEST_ISOLATION_ROOT");
    expect(errorOf({ ...base(), DELEGATE_TEST_ISOLATION_ROOT: "relative/root" })).toContain("absolute path");
  });

  test("Bifrost variables are checked only when the gateway is bifrost", () => {
    const stray = {
      DELEGATE_BIFROST_URL: "ftp://nope",
      DELEGATE_BIFROST_LOCAL_URL: "not a url",
      DELEGATE_BIFROST_API: "grpc",
    };
    const c = parseConfig({ ...base(), ...stray });
    expect(c.gateway.kind).toBe("litellm");
    expect(c.gateway.bifrostUrl).toBeUndefined();
    expect(errorOf({ ...base(), ...stray, DELEGATE_GATEWAY: "bifrost" })).toContain(
      'DELEGATE_BIFROST_URL="ftp://nope"',
    );
    expect(
      errorOf({
        ...base(),
        DELEGATE_GATEWAY: "bifrost",
        DELEGATE_BIFROST_URL: "http://h:4010",
        DELEGATE_BIFROST_API: "grpc",
      }),
    ).toBe('DELEGATE_BIFROST_API="grpc" is invalid: expected one of litellm, openai');
  });

  test("switches accept the usual words and name what is allowed otherwise", () => {
    expect(parseConfig({ ...base(), DELEGATE_RUN_BASH: " Off " }).agent.runBash).toBe(false);
    expect(parseConfig({ ...base(), DELEGATE_STREAMING: "YES" }).backend.streaming).toBe(true);
    expect(errorOf({ ...base(), DELEGATE_RUN_BASH: "maybe" })).toBe(
      'DELEGATE_RUN_BASH="maybe" is invalid: expected 1 or 0 (also true/false, yes/no, on/off)',
    );
    expect(errorOf({ ...base(), DELEGATE_HTTP_TIMEOUT: "soon" })).toBe(
      'DELEGATE_HTTP_TIMEOUT="soon" is invalid: expected a number from 1 to 86400',
    );
    expect(errorOf({ ...base(), DELEGATE_MAX_NUDGES: "1.5" })).toContain("an integer from 0 to 10");
  });

  test("passthrough prefixes reach children; a prefix never carries a credential-looking name", () => {
    const c = parseConfig({
      ...base(),
      DELEGATE_ENV_PASSTHROUGH: "NPM_CONFIG_*",
      NPM_CONFIG_CACHE: "/tmp/npm",
      NPM_CONFIG_TOKEN: "npm-secret",
    });
    expect(c.childEnv.NPM_CONFIG_CACHE).toBe("/tmp/npm");
    expect(c.childEnv.NPM_CONFIG_TOKEN).toBeUndefined();
    expect(errorOf({ ...base(), DELEGATE_ENV_PASSTHROUGH: "GITHUB_TOKEN" })).toContain("GITHUB_TOKEN is refused");
    expect(errorOf({ ...base(), DELEGATE_ENV_PASSTHROUGH: "A-B" })).toContain("environment variable names");
  });

  test("DELEGATE_CODEX_ENV_PASSTHROUGH: exact names, credentials allowed, given to the Codex child only", () => {
    const c = parseConfig({
      ...base(),
      DELEGATE_CODEX_ENV_PASSTHROUGH: "AZURE_OPENAI_API_KEY,UNSET_ONE",
      AZURE_OPENAI_API_KEY: "az-secret",
    });
    expect(c.codexChildEnv.AZURE_OPENAI_API_KEY).toBe("az-secret");
    expect(c.codexChildEnv.PATH).toBe(process.env.PATH!);
    expect("UNSET_ONE" in c.codexChildEnv).toBe(false);
    expect(c.childEnv.AZURE_OPENAI_API_KEY).toBeUndefined();
    expect(c.codex.envPassthrough).toEqual(["AZURE_OPENAI_API_KEY", "UNSET_ONE"]);
    expect(errorOf({ ...base(), DELEGATE_CODEX_ENV_PASSTHROUGH: "AZURE_*" })).toContain(
      "exact environment variable names",
    );
    expect(errorOf({ ...base(), DELEGATE_CODEX_ENV_PASSTHROUGH: "DELEGATE_LOCAL_KEY" })).toContain(
      "never reaches a child",
    );
  });

  test("DELEGATE_DSH_ENV_PASSTHROUGH: exact names, credentials allowed, given to the dsh launcher only", () => {
    const c = parseConfig({
      ...base(),
      DELEGATE_DSH_ENV_PASSTHROUGH: "DEEPSEEK_API_KEY,UNSET_ONE",
      DEEPSEEK_API_KEY: "ds-secret",
    });
    expect(c.dshChildEnv.DEEPSEEK_API_KEY).toBe("ds-secret");
    expect(c.dshChildEnv.PATH).toBe(process.env.PATH!);
    expect("UNSET_ONE" in c.dshChildEnv).toBe(false);
    // Nothing else gets it: not agent commands, git probes or Codex. A nested dl holds it
    // (to cut it from what it writes), and gives it to nothing but a dsh launcher.
    expect(c.childEnv.DEEPSEEK_API_KEY).toBeUndefined();
    expect(c.codexChildEnv.DEEPSEEK_API_KEY).toBeUndefined();
    expect(c.secrets).toContain("ds-secret");
    expect(parseConfig(c.dlChildEnv).childEnv.DEEPSEEK_API_KEY).toBeUndefined();
    expect(c.dsh.envPassthrough).toEqual(["DEEPSEEK_API_KEY", "UNSET_ONE"]);
    expect(errorOf({ ...base(), DELEGATE_DSH_ENV_PASSTHROUGH: "DEEPSEEK_*" })).toContain(
      "exact environment variable names",
    );
    expect(errorOf({ ...base(), DELEGATE_DSH_ENV_PASSTHROUGH: "DELEGATE_LOCAL_KEY" })).toContain(
      "never reaches a child",
    );
  });
});
