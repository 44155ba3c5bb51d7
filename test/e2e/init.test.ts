import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * `dl init` as a newcomer runs it: a fresh HOME, a local model server given with --probe
 * (the scripted fake, listing its models like Ollama or llama.cpp do), --yes for the
 * agents. The line it prints is then run as Claude Code would run it.
 */
let fake: FakeModel;
beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ models: ["local-qwen-test", "local-other"] });
});
afterAll(() => fake?.stop());

function freshHome(): { home: string; env: Record<string, string | undefined> } {
  const home = tempDir("init-home");
  const env = {
    HOME: home,
    XDG_CACHE_HOME: undefined,
    XDG_CONFIG_HOME: undefined,
    XDG_STATE_HOME: undefined,
    CODEX_HOME: undefined,
  };
  return { home, env };
}

describe("dl init", () => {
  test("--probe <fake> --yes on a fresh HOME: agents copied (yours kept), a registration line that works", async () => {
    const { home, env } = freshHome();
    const agents = join(home, ".claude", "agents");
    mkdirSync(agents, { recursive: true });
    writeFileSync(join(agents, "coder.md"), "mine\n");
    const r = await runDl(["init", "--probe", fake.url, "--yes", "--json"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.servers.find((s: { name: string }) => s.name === "--probe")).toMatchObject({
      reachable: true,
      models: ["local-other", "local-qwen-test"],
    });
    expect(out.agents).toMatchObject({ copied: ["reviewer.md", "test-writer.md"], kept: ["coder.md"] });
    expect(readFileSync(join(agents, "coder.md"), "utf8")).toBe("mine\n");
    expect(readdirSync(agents).sort()).toEqual(["coder.md", "reviewer.md", "test-writer.md"]);
    expect(out.register_line).toBe(
      `claude mcp add delegate-local --scope user --env DELEGATE_LOCAL_URL=${fake.url} --env DELEGATE_LOCAL_MODEL=local-other -- ${requireBinary()} serve`,
    );

    // Run what the line registers, the way Claude Code starts it, and delegate to a copied agent.
    const words = (out.register_line as string).split(" ");
    const registered: Record<string, string> = {};
    words.forEach((w, i) => {
      if (words[i - 1] === "--env") registered[w.slice(0, w.indexOf("="))] = w.slice(w.indexOf("=") + 1);
    });
    const cmd = words.slice(words.indexOf("--") + 1);
    const transport = new StdioClientTransport({
      command: cmd[0]!,
      args: cmd.slice(1),
      env: testEnv({ ...env, ...registered }),
    });
    const client = new Client({ name: "init-test", version: "1" });
    await client.connect(transport);
    try {
      fake.always(reply.text("reviewed: fine"));
      const res = (await client.callTool(
        {
          name: "delegate_to_local_agent",
          arguments: { agent_name: "reviewer", task: "review", workdir: makeRepo(home, "proj").repo },
        },
        { timeout: 60_000 },
      )) as unknown as { structuredContent: { success: boolean; final_response: string; model_used: string } };
      expect(res.structuredContent).toMatchObject({
        success: true,
        final_response: "reviewed: fine",
        model_used: "local-other",
      });
    } finally {
      await client.close();
    }
  }, 60_000);

  test("without --yes and without a terminal it copies nothing and says how", async () => {
    const { home, env } = freshHome();
    const r = await runDl(["init", "--probe", fake.url, "--model", "local-qwen-test"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("example agents: not copied (dl init --yes copies them");
    expect(r.stdout).toContain("--env DELEGATE_LOCAL_MODEL=local-qwen-test");
    expect(() => readdirSync(join(home, ".claude", "agents"))).toThrow();
  });

  test("it reaches nothing but localhost, and says what to start when nothing answers", async () => {
    for (const flag of ["--probe", "--endpoint"]) {
      const r = await runDl(["init", flag, "http://192.0.2.1:11434"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("must name this machine");
    }
    const none = await runDl(["init", "--endpoint", "http://127.0.0.1:9", "--json"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("lists no models");
  });
});
