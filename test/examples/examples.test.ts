import { describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { listAgents } from "../../src/agent/frontmatter.ts";
import { isLocalLane } from "../../src/backends/gateway.ts";
import { parseConfig } from "../../src/config.ts";
import { DEFAULT_CHAINS } from "../../src/dispatch/failover.ts";
import { enabledAliases, isXiaomi, loadDshModels } from "../../src/jobs/providers/dsh/models.ts";
import { requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";

/**
 * Every file under examples/ is checked against what dl itself accepts: its config parser
 * for every environment a host example sets, its agent and dsh-models parsers, its lane
 * and failover rules for the LiteLLM aliases, and its command line for what a host
 * starts. A new example file without a check here fails the first test.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const EX = join(ROOT, "examples");
/** Models the reference took out of the supported set: no example may offer them. */
const REMOVED_MODELS = ["deepseek-v4-pro"];

const read = (f: string) => readFileSync(join(EX, f), "utf8");

/** What dl's one config parser says of an environment a host would hand `dl serve`. */
function configProblem(env: Record<string, string>): string | null {
  // Hosts expand ${VAR} / $VAR from their own environment: stand in a value for each.
  const expanded = Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, "expanded-value")]),
  );
  try {
    parseConfig({ HOME: tempDir("ex-home"), ...expanded });
    return null;
  } catch (e) {
    return String((e as Error).message);
  }
}

/** The dl command a host starts: `dl help <command>` answers only for a real one. */
async function expectDlCommand(command: string, args: string[]): Promise<void> {
  expect(command).toEndWith("/dl");
  expect(args.length).toBeGreaterThan(0);
  const help = await runDl(["help", args[0]!]);
  expect(help.code).toBe(0);
}

type LiteLlmEntry = { model_name: string; litellm_params: { model: string; api_base?: string } };
const litellm = Bun.YAML.parse(read("litellm.example.yaml")) as { model_list: LiteLlmEntry[] };
const served = new Set(litellm.model_list.map((m) => m.model_name));

/** A fake `claude` on PATH that records its argv and which variables it got, never their values. */
function fakeClaude(): { dir: string; log: string } {
  const dir = tempDir("fake-claude");
  const log = join(dir, "calls.txt");
  writeFileSync(
    join(dir, "claude"),
    `#!/bin/sh
for a in "$@"; do printf 'arg %s\\n' "$a"; done >> "${log}"
for v in ANTHROPIC_BASE_URL ANTHROPIC_DEFAULT_OPUS_MODEL ANTHROPIC_DEFAULT_SONNET_MODEL ANTHROPIC_DEFAULT_HAIKU_MODEL; do
  eval "printf 'env %s=%s\\n' $v \\"\\\${$v-}\\"" >> "${log}"
done
[ -n "\${ANTHROPIC_AUTH_TOKEN-}" ] && echo "token present" >> "${log}"
[ -n "\${ANTHROPIC_API_KEY-}" ] && echo "anthropic key present" >> "${log}"
exit 0
`,
  );
  chmodSync(join(dir, "claude"), 0o755);
  return { dir, log };
}

async function runScript(file: string, env: Record<string, string | undefined>, args: string[] = []) {
  const p = Bun.spawn(["bash", join(EX, file), ...args], { env: testEnv(env), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { stdout, stderr, code };
}

const CHECKED = [
  "agents/coder.md",
  "agents/reviewer.md",
  "agents/test-writer.md",
  "bifrost.json",
  "claude-glm.sh",
  "dsh-models.json",
  "hosts/claude-code-register.sh",
  "hosts/claude-code.mcp.json",
  "hosts/codex-config.toml",
  "hosts/gemini-settings.json",
  "litellm.example.yaml",
];

describe("examples/", () => {
  test("every example file has a check here", () => {
    const files = (readdirSync(EX, { recursive: true }) as string[]).filter((f) => statSync(join(EX, f)).isFile());
    expect(files.sort()).toEqual(CHECKED);
  });

  test("no example offers a model the reference removed", () => {
    for (const m of REMOVED_MODELS) expect(CHECKED.filter((f) => read(f).includes(m))).toEqual([]);
  });

  test("litellm.example.yaml: nine providers; local aliases stay on this machine; dl's defaults are served", () => {
    const names = litellm.model_list.map((m) => m.model_name);
    expect(new Set(names).size).toBe(names.length);
    const providers = new Set(
      litellm.model_list.map((m) => {
        const base = m.litellm_params.api_base;
        return base ? new URL(base).host : m.litellm_params.model.split("/")[0]!;
      }),
    );
    expect(providers.size).toBe(9);
    for (const m of litellm.model_list) {
      expect(m.litellm_params.model).toMatch(/^[a-z_]+\//);
      // dl never fails a local-lane model over to the cloud; the alias must not go there either.
      if (isLocalLane(m.model_name)) expect(new URL(m.litellm_params.api_base!).hostname).toBe("localhost");
    }
    const defaults = parseConfig({ HOME: tempDir("ex-home") });
    expect(served).toContain(defaults.backend.model);
    for (const [from, to] of Object.entries(DEFAULT_CHAINS)) for (const m of [from, ...to]) expect(served).toContain(m);
  });

  test("dsh-models.json: dl's parser reads it; it enables models, never MiMo", () => {
    const models = loadDshModels(join(EX, "dsh-models.json"));
    expect(models).not.toBeNull();
    const enabled = enabledAliases(models!);
    expect(enabled.length).toBeGreaterThan(0);
    for (const m of models!.values()) if (isXiaomi(m.model) || isXiaomi(m.alias)) expect(m.enabled).toBe(false);
  });

  test("bifrost.json: each virtual key is a dl setting, and the local lane's key allows only local models", () => {
    const cfg = JSON.parse(read("bifrost.json")) as {
      governance: { virtual_keys: { value: string; provider_configs: { allowed_models: string[] }[] }[] };
    };
    const lanes = cfg.governance.virtual_keys.map((vk) => ({
      variable: vk.value.replace(/^env\./, ""),
      models: vk.provider_configs.flatMap((p) => p.allowed_models),
    }));
    expect(lanes.map((l) => l.variable).sort()).toEqual(["DELEGATE_BIFROST_VK_CODE", "DELEGATE_BIFROST_VK_LOCAL"]);
    const env = { DELEGATE_GATEWAY: "bifrost", DELEGATE_BIFROST_URL: "http://localhost:8080" };
    expect(configProblem(Object.fromEntries([...Object.entries(env), ...lanes.map((l) => [l.variable, "vk"])]))).toBe(
      null,
    );
    for (const l of lanes) {
      for (const m of l.models) expect(isLocalLane(m)).toBe(l.variable === "DELEGATE_BIFROST_VK_LOCAL");
      for (const m of l.models) expect(served).toContain(m);
    }
  });

  test("agents/*.md: dl's frontmatter parser reads each, named as its file, every tool honoured", async () => {
    const agents = await listAgents(join(EX, "agents"));
    expect(agents.map((a) => a.name).sort()).toEqual(["coder", "reviewer", "test-writer"]);
    for (const a of agents) {
      expect(a.error).toBeUndefined();
      expect(a.warnings ?? []).toEqual([]);
      expect(a.description.length).toBeGreaterThan(20);
      expect(a.tools?.length).toBeGreaterThan(0);
    }
  });

  test("hosts/*.json and codex-config.toml: dl's command and no environment (settings live in the settings file)", async () => {
    const servers = [
      ...["hosts/claude-code.mcp.json", "hosts/gemini-settings.json"].map((f) =>
        Object.values((JSON.parse(read(f)) as { mcpServers: Record<string, HostServer> }).mcpServers),
      ),
      Object.values(
        (Bun.TOML.parse(read("hosts/codex-config.toml")) as { mcp_servers: Record<string, HostServer> }).mcp_servers,
      ),
    ];
    for (const list of servers) {
      expect(list).toHaveLength(1);
      const s = list[0]!;
      await expectDlCommand(s.command, s.args);
      expect(s.env).toBeUndefined();
    }
  });

  test("hosts/claude-code-register.sh runs the one registration line dl init prints: no --env, no key", async () => {
    const fake = fakeClaude();
    const r = await runScript("hosts/claude-code-register.sh", {
      PATH: `${fake.dir}:${process.env.PATH}`,
      DL: requireBinary(),
      LITELLM_KEY: "sk-register-example",
    });
    expect(r.code).toBe(0);
    const args = readFileSync(fake.log, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("arg "))
      .map((l) => l.slice(4));
    expect(args.slice(0, 5)).toEqual(["mcp", "add", "delegate-local", "--scope", "user"]);
    const init = JSON.parse(
      (await runDl(["init", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--json"])).stdout,
    );
    expect(["claude", ...args].join(" ")).toBe(init.register_line);
    expect(args).not.toContain("--env");
    await expectDlCommand(requireBinary(), ["serve"]);
  });

  test("claude-glm.sh points Claude Code at Z.ai with the key, and drops an Anthropic key", async () => {
    const fake = fakeClaude();
    const env = {
      PATH: `${fake.dir}:${process.env.PATH}`,
      ZAI_API_KEY: "zai-example-key-1234",
      ANTHROPIC_API_KEY: "sk-ant-x",
    };
    const r = await runScript("claude-glm.sh", env, ["-p", "hello"]);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain("zai-example-key-1234");
    const log = readFileSync(fake.log, "utf8");
    expect(log).toContain("arg -p\narg hello\n");
    expect(log).toContain("env ANTHROPIC_BASE_URL=https://api.z.ai/api/anthropic");
    expect(log).toContain("env ANTHROPIC_DEFAULT_SONNET_MODEL=glm-5.2[1m]");
    expect(log).toContain("token present");
    expect(log).not.toContain("anthropic key present");
    // The key from its file works too; with no key at all it stops before starting claude.
    const keyFile = join(tempDir("zai"), "api-key");
    writeFileSync(keyFile, "zai-file-key-5678\n", { mode: 0o600 });
    const fromFile = await runScript("claude-glm.sh", {
      PATH: env.PATH,
      ZAI_API_KEY: undefined,
      ZAI_KEY_FILE: keyFile,
    });
    expect(fromFile.code).toBe(0);
    const none = fakeClaude();
    const missing = await runScript("claude-glm.sh", {
      PATH: `${none.dir}:${process.env.PATH}`,
      ZAI_API_KEY: undefined,
      ZAI_KEY_FILE: join(tempDir("zai-none"), "absent"),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ZAI_API_KEY");
    expect(() => readFileSync(none.log)).toThrow();
  });
});

type HostServer = { command: string; args: string[]; env?: Record<string, string> };
