import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";

/**
 * The host set-ups the README and docs/HOSTS.md show are real files under examples/, and the one host
 * installed here (the Codex CLI, from npm) reads its example as meant: dl's command, its
 * environment, the long tool timeout.
 */
const ROOT = resolve(import.meta.dir, "..", "..");
const CODEX = join(ROOT, "node_modules", ".bin", "codex");
// The README keeps the first set-up; docs/HOSTS.md (links relative to docs/) has every host.
const readme = [
  readFileSync(join(ROOT, "README.md"), "utf8"),
  readFileSync(join(ROOT, "docs", "HOSTS.md"), "utf8").replaceAll("](../examples/", "](examples/"),
].join("\n");

describe("host examples", () => {
  test("the README and docs/HOSTS.md link every host example, and each JSON example starts `dl serve`", () => {
    for (const f of [
      "examples/hosts/claude-code-register.sh",
      "examples/hosts/claude-code.mcp.json",
      "examples/hosts/codex-config.toml",
      "examples/hosts/gemini-settings.json",
      "examples/litellm.example.yaml",
      "examples/claude-glm.sh",
      "examples/bifrost.json",
    ])
      expect(readme).toContain(`(${f})`);
    for (const f of ["claude-code.mcp.json", "gemini-settings.json"]) {
      const cfg = JSON.parse(readFileSync(join(ROOT, "examples/hosts", f), "utf8")) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      };
      const [server] = Object.values(cfg.mcpServers);
      expect(server?.command).toEndWith("/dl");
      expect(server?.args).toEqual(["serve"]);
    }
    expect(readme).toContain("Troubleshooting");
    // One server name everywhere; no example names a coding model the gateway may lack;
    // Gemini's example works in `gemini -p`, which drops an untrusted server's tools.
    for (const f of ["claude-code.mcp.json", "gemini-settings.json"]) {
      const cfg = JSON.parse(readFileSync(join(ROOT, "examples/hosts", f), "utf8"));
      expect(Object.keys(cfg.mcpServers)).toEqual(["delegate-local"]);
      expect(JSON.stringify(cfg)).not.toContain("DELEGATE_LOCAL_CODING_MODEL");
    }
    expect(readFileSync(join(ROOT, "examples/hosts/codex-config.toml"), "utf8")).toContain(
      "[mcp_servers.delegate-local]",
    );
    const register = readFileSync(join(ROOT, "examples/hosts/claude-code-register.sh"), "utf8");
    expect(register).not.toMatch(/^\s*--env DELEGATE_LOCAL_CODING_MODEL/m);
    const gemini = JSON.parse(readFileSync(join(ROOT, "examples/hosts/gemini-settings.json"), "utf8"));
    expect(gemini.mcpServers["delegate-local"].trust).toBe(true);
    expect(readme).toContain("folder trust");
    expect(readme).not.toMatch(/mcp_servers\.dl\b|"dl": \{/);
    expect(readme).toContain("dl serve --check");
  });

  test("the Codex CLI reads the config.toml example: dl serve, no env (the settings file has it), a 2 h tool timeout", async () => {
    const home = tempDir("codex-host");
    const toml = readFileSync(join(ROOT, "examples/hosts/codex-config.toml"), "utf8");
    expect(toml).toContain('default_tools_approval_mode = "approve"');
    writeFileSync(join(home, "config.toml"), toml.replace("/home/you/.local/bin/dl", requireBinary()));
    const p = Bun.spawn([CODEX, "mcp", "get", "delegate-local", "--json"], {
      env: testEnv({ CODEX_HOME: home }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    const got = JSON.parse(out) as {
      enabled: boolean;
      transport: { command: string; args: string[]; env: Record<string, string> | null };
      tool_timeout_sec: number;
    };
    expect(got.enabled).toBe(true);
    expect(got.transport.command).toBe(requireBinary());
    expect(got.transport.args).toEqual(["serve"]);
    expect(got.transport.env ?? {}).toEqual({});
    expect(got.tool_timeout_sec).toBe(7200);
  });
});
