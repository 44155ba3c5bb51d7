import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SlotPool } from "../../src/sys/slots.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";

/**
 * What an MCP host and a shell user each get from dl: every tool's output schema, dl's
 * warnings as MCP log messages at the level the client sets, the last progress line
 * before the result, `dl run` saying at once what it is doing, and error advice worded
 * for where it is read (tools for a model, commands and flags for a person).
 */
const KEY = "sk-surface-key";
let fake: FakeModel;
let agentsDir: string;
let codexState: string;
let session: DlSession;
const logs: { level: string; data: unknown }[] = [];
const clientErrors: string[] = [];

const env = () => ({
  DELEGATE_LOCAL_URL: fake.anthropicUrl,
  DELEGATE_LOCAL_KEY: KEY,
  DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  DELEGATE_LOCAL_MODEL: "local-test-model",
  DELEGATE_CODEX_STATE_DIR: codexState,
  DELEGATE_CODEX_BIN: join(tempDir("no-codex"), "codex"),
});

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
  agentsDir = tempDir("surface-agents");
  codexState = join(tempDir("surface-codex"), "state");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nYou help.\n");
  session = await connectDl(env());
  session.client.setNotificationHandler("notifications/message", (n) => {
    logs.push({ level: n.params.level, data: n.params.data });
  });
  session.client.onerror = (e) => clientErrors.push(String(e));
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});
beforeEach(() => fake.reset());

describe("MCP surface", () => {
  test("every tool publishes an object outputSchema", async () => {
    const { tools } = await session.client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(16);
    const missing = tools.filter((t) => t.outputSchema?.type !== "object").map((t) => t.name);
    expect(missing).toEqual([]);
  });

  test("the job tools' structured refusals still pass the client's output-schema check", async () => {
    // The SDK client validates error results against outputSchema too: this call would throw.
    const r = await session.client.callTool({
      name: "delegate_to_gemini",
      arguments: { task: "x", workdir: tempDir("surface-proj") },
    });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ failure_kind: "gemini_not_allowed", code: expect.any(String) });
  });

  test("dl's warnings arrive as log messages, filtered at the level the client set", async () => {
    const shared = join(codexState, "shared.json");
    await session.client.callTool({ name: "poll_codex", arguments: { ids: ["cx-none"] } });
    await session.client.setLoggingLevel("error");
    writeFileSync(shared, "{corrupt");
    await session.client.callTool({ name: "poll_codex", arguments: { ids: ["cx-none"] } });
    // A round trip later, a message sent before the answer would have been handled.
    await session.client.ping();
    expect(logs.filter((l) => String(l.data).includes("shared.json"))).toEqual([]);

    await session.client.setLoggingLevel("warning");
    writeFileSync(shared, "{corrupt again");
    await session.client.callTool({ name: "poll_codex", arguments: { ids: ["cx-none"] } });
    const seen = await until(
      () => logs.find((l) => String(l.data).includes("shared.json")),
      "the warning as a log message",
    );
    expect(seen.level).toBe("warning");
  });

  test("the last progress notification reaches the client before the result, run after run", async () => {
    const dir = tempDir("surface-proj");
    for (let run = 0; run < 8; run++) {
      fake.script(reply.tool("run_bash", { command: "true" }), reply.text("finished"));
      const seen: string[] = [];
      const r = await session.client.callTool(
        { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task: "go", workdir: dir } },
        { onprogress: (p) => void seen.push(p.message ?? "") },
      );
      expect((r.structuredContent as { success: boolean }).success).toBe(true);
      expect(seen.at(-1)).toMatch(/turn 2\/\d+: replied without tools/);
    }
    expect(clientErrors.filter((e) => e.includes("unknown token"))).toEqual([]);
  });

  test("an unknown agent: the MCP error names list_local_agents", async () => {
    const r = await session.client.callTool({
      name: "delegate_to_local_agent",
      arguments: { agent_name: "nobody", task: "x", workdir: tempDir("surface-proj") },
    });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toContain("list_local_agents");
  });
});

describe("dl run speaks to a person", () => {
  test("errors name commands and flags, never MCP tools or parameters", async () => {
    const dir = tempDir("surface-run");
    const ghost = await runDl(["run", "nobody", "x", "--workdir", dir], env());
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).not.toContain("list_local_agents");
    const down = await runDl(["run", "helper", "x", "--workdir", dir], {
      ...env(),
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9/v1/messages",
    });
    expect(down.code).toBe(1);
    const all = down.stdout + down.stderr;
    expect(all).toContain("run `dl status`");
    for (const mcp of ["local_backend_status", "provider_url", "list_local_agents", ".. "])
      expect(all).not.toContain(mcp);
  });

  test.skipIf(process.platform !== "linux")(
    "prints at once what it is doing, and Ctrl-C while the model thinks exits 130",
    async () => {
      fake.script(reply.hang());
      const p = Bun.spawn([requireBinary(), "run", "helper", "think hard", "--workdir", tempDir("surface-run")], {
        env: testEnv(env()),
        stdout: "pipe",
        stderr: "pipe",
      });
      let err = "";
      const reading = (async () => {
        for await (const c of p.stderr) err += new TextDecoder().decode(c);
      })();
      // Both lines come before the model has answered anything.
      await until(() => err.includes("turn 1 started"), "dl run to say the first turn started");
      expect(err).toMatch(/^dl run: helper on local-test-model in .+; taking a slot of pool local-/m);
      // The model has the request and has not answered: nothing but dl's own lines so far.
      await until(() => fake.inFlight() === 1, "the first model request");
      expect(err).not.toContain("turn 1/");
      p.kill("SIGINT");
      expect(await p.exited).toBe(130);
      await reading;
    },
  );

  test.skipIf(process.platform !== "linux")("says at once that it waits for a slot when the pool is full", async () => {
    const cache = tempDir("surface-cache");
    const pool = new SlotPool({ dir: join(cache, "slots", "local-"), size: 2 });
    using _a = pool.tryAcquire({ label: "other window" });
    using _b = pool.tryAcquire({ label: "other window" });
    const p = Bun.spawn([requireBinary(), "run", "helper", "x", "--workdir", tempDir("surface-run")], {
      env: testEnv({ ...env(), DELEGATE_CACHE_DIR: cache }),
      stdout: "pipe",
      stderr: "pipe",
    });
    let err = "";
    const reading = (async () => {
      for await (const c of p.stderr) err += new TextDecoder().decode(c);
    })();
    await until(() => err.includes("waiting for a slot"), "dl run to say it waits for a slot");
    expect(err).toContain("all 2 slots of pool local- are busy");
    expect(fake.requests).toHaveLength(0);
    p.kill("SIGINT");
    expect(await p.exited).toBe(130);
    await reading;
  });
});
