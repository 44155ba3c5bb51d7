import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * `dl init` as a newcomer runs it: a fresh HOME, a local model server given with --probe
 * or --endpoint (the scripted fake, listing its models in its own order like Ollama or
 * LiteLLM do), --yes for the settings file and the agents. Every assertion is about the
 * server the test started, so whatever else listens on this machine's usual ports (4000,
 * 11434 …) changes nothing. The line it prints is then run as Claude Code runs it: with
 * no variable at all, dl serve takes its settings from the file.
 */
let fake: FakeModel;
beforeAll(async () => {
  requireBinary();
  // A cloud alias first, as a LiteLLM proxy may list it: the local model must still win.
  fake = await startFakeModel({ models: ["deepseek-v4-flash", "local-qwen-test", "local-other"] });
});
afterAll(() => fake?.stop());

/** A HOME of its own with no DELEGATE_* setting but the suite's isolation net; `claude` is the fake. */
function freshHome(): { home: string; env: Record<string, string | undefined> } {
  const home = tempDir("init-home");
  const bin = join(home, "bin");
  mkdirSync(bin);
  copyFileSync(resolve(import.meta.dir, "..", "fixture", "fake-claude.sh"), join(bin, "claude"));
  const env = {
    HOME: home,
    PATH: `${bin}:${process.env.PATH}`,
    XDG_CACHE_HOME: undefined,
    XDG_CONFIG_HOME: undefined,
    XDG_STATE_HOME: undefined,
    CODEX_HOME: undefined,
    DELEGATE_TOOLS: undefined,
  };
  return { home, env };
}

const settingsFile = (home: string) => join(home, ".config", "dl", "settings.env");

describe("dl init", () => {
  test("--probe <fake> --yes: settings file 0600, local model chosen and said why, agents copied (yours kept), a line without --env that works", async () => {
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
      models: ["deepseek-v4-flash", "local-qwen-test", "local-other"],
    });
    expect(out.model).toBe("local-qwen-test");
    expect(out.why).toContain("first local model");
    expect(out.settings_file).toMatchObject({ path: settingsFile(home), written: true });
    expect(statSync(settingsFile(home)).mode & 0o777).toBe(0o600);
    expect(readFileSync(settingsFile(home), "utf8")).toContain(`DELEGATE_LOCAL_URL=${fake.url}\n`);
    expect(out.agents).toMatchObject({ copied: ["reviewer.md", "test-writer.md"], kept: ["coder.md"] });
    expect(readFileSync(join(agents, "coder.md"), "utf8")).toBe("mine\n");
    expect(readdirSync(agents).sort()).toEqual(["coder.md", "reviewer.md", "test-writer.md"]);
    expect(out.register_line).toBe(`claude mcp add delegate-local --scope user -- ${requireBinary()} serve`);

    // Run what the line registers the way Claude Code starts it (no variable from the
    // host), and delegate to a copied agent: the URL and model come from the file.
    const cmd = (out.register_line as string).split(" ").slice(out.register_line.split(" ").indexOf("--") + 1);
    const transport = new StdioClientTransport({ command: cmd[0]!, args: cmd.slice(1), env: testEnv(env) });
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
        model_used: "local-qwen-test",
      });
    } finally {
      await client.close();
    }
  }, 60_000);

  test("in a fresh HOME, init --yes --endpoint URL --model M: dl status (no DELEGATE_* set) uses both and says they came from the file", async () => {
    const { home, env } = freshHome();
    const init = await runDl(["init", "--yes", "--endpoint", fake.url, "--model", "local-other"], env);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain(`wrote ${settingsFile(home)} (mode 0600)`);
    const s = await runDl(["status", "--json"], env);
    const report = JSON.parse(s.stdout);
    expect(report.config.backend.model).toBe("local-other");
    expect(report.config.gateway.local_url).toBe(fake.url);
    expect(report.settings).toMatchObject({ file: settingsFile(home), file_mode: "0600" });
    expect(report.settings.sources).toMatchObject({
      DELEGATE_LOCAL_URL: "file",
      DELEGATE_LOCAL_MODEL: "file",
      DELEGATE_LOCAL_KEY: "default",
    });
    const text = await runDl(["status"], env);
    expect(text.stdout).toMatch(/DELEGATE_LOCAL_MODEL\s+from the file/);
    // The environment wins over the file, and status says so.
    const over = await runDl(["status", "--json"], { ...env, DELEGATE_LOCAL_MODEL: "local-qwen-test" });
    const o = JSON.parse(over.stdout);
    expect(o.config.backend.model).toBe("local-qwen-test");
    expect(o.settings.sources.DELEGATE_LOCAL_MODEL).toBe("environment");
  });

  test("a key goes into the file, never into the registration line or any output; the file's folder is 0700 even if it was 0755", async () => {
    const { home, env } = freshHome();
    // A ~/.config/dl another tool (or an older dl) made open to others is tightened.
    mkdirSync(dirname(settingsFile(home)), { recursive: true, mode: 0o755 });
    chmodSync(dirname(settingsFile(home)), 0o755);
    const key = "sk-init-test-0123456789abcdef";
    const r = await runDl(
      ["init", "--yes", "--endpoint", fake.url, "--model", "m1", "--key", "-", "--json"],
      env,
      `${key}\n`,
    );
    expect(r.code).toBe(0);
    expect(readFileSync(settingsFile(home), "utf8")).toContain(`DELEGATE_LOCAL_KEY=${key}\n`);
    expect(statSync(dirname(settingsFile(home))).mode & 0o777).toBe(0o700);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(JSON.parse(r.stdout).register_line).not.toMatch(/--env|KEY/);
    const s = await runDl(["status", "--json"], env);
    expect(s.stdout).not.toContain(key);
    expect(JSON.parse(s.stdout).settings.sources.DELEGATE_LOCAL_KEY).toBe("file");
  });

  test("--register claude runs the one line; a second one says the entry exists and how to replace it", async () => {
    const { home, env } = freshHome();
    const args = ["init", "--yes", "--endpoint", fake.url, "--model", "m1", "--register", "claude"];
    const first = await runDl(args, env);
    expect(first.code).toBe(0);
    expect(readFileSync(join(home, ".fake-claude", "delegate-local"), "utf8").trim()).toBe(
      `--scope user -- ${requireBinary()} serve`,
    );
    const second = await runDl(args, env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("delegate-local is already registered with Claude Code with this dl");
    expect(second.stdout).toContain(`to replace it: claude mcp remove delegate-local --scope user && claude mcp add`);
  });

  test("without --yes and without a terminal it writes and copies nothing and says how", async () => {
    const { home, env } = freshHome();
    const r = await runDl(["init", "--probe", fake.url, "--model", "local-qwen-test"], env);
    expect(r.code).toBe(0);
    // What it found comes first, then what it would do.
    expect(r.stdout.indexOf("model servers on this machine")).toBe(0);
    expect(r.stdout).toContain(`not written (dl init --yes --endpoint ${fake.url} --model local-qwen-test writes them`);
    expect(r.stdout).toContain("example agents: not copied (dl init --yes copies them");
    expect(r.stdout).not.toContain("--env");
    expect(() => readdirSync(join(home, ".claude", "agents"))).toThrow();
    expect(() => statSync(settingsFile(home))).toThrow();
  });

  test("a --model the server does not list, or a server not started yet, is written as asked and said", async () => {
    const { env } = freshHome();
    const typo = await runDl(["init", "--endpoint", fake.url, "--model", "local-qwen-tset", "--json"], env);
    expect(JSON.parse(typo.stdout).why).toBe(
      `given with --model; ${fake.url} does not list it: check the name (dl status lists what it serves)`,
    );
    const listed = await runDl(["init", "--endpoint", fake.url, "--model", "local-qwen-test", "--json"], env);
    expect(JSON.parse(listed.stdout).why).toBe("given with --model");
    const later = await runDl(["init", "--endpoint", "http://127.0.0.1:9", "--model", "m"], env);
    expect(later.stdout).toContain(
      "model: m at http://127.0.0.1:9 (given with --model; nothing answers at http://127.0.0.1:9 yet: start it, then run dl status)",
    );
    // The servers' URLs in one column, so their models line up.
    const rows = later.stdout.split("\n").filter((l) => /^ {2}\S+ +http:/.test(l));
    expect(new Set(rows.map((l) => /^ {2}\S+ +http\S+ +/.exec(l)?.[0].length)).size).toBe(1);
  });

  test("a value that is not one line is never written: a --model, --cache-dir or --key with a line break, a server's model name with one", async () => {
    const { home, env } = freshHome();
    // Each would add a line of its own to the settings file: another setting, chosen by whoever typed or listed it.
    const injected = "local-m\nDELEGATE_LOCAL_URL=http://127.0.0.1:1";
    for (const [flag, value] of [
      ["--model", injected],
      ["--cache-dir", `/tmp/c\nDELEGATE_LOCAL_URL=http://127.0.0.1:1`],
      ["--model", "local-m\u001b]0;title\u0007"],
    ]) {
      const r = await runDl(["init", "--yes", "--endpoint", fake.url, "--model", "m1", flag!, value!], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `dl init: ${flag} has a line break or a control character; it is written as one line of the settings file (run dl help init)\n`,
      );
    }
    const key = await runDl(
      ["init", "--yes", "--endpoint", fake.url, "--model", "m1", "--key", "-"],
      env,
      "sk-a\u0001b\n",
    );
    expect(key.code).toBe(2);
    expect(key.stderr).toContain("--key must be one word");
    expect(() => statSync(settingsFile(home))).toThrow();
    // A server that lists such a name first: the next name it lists is proposed, and the file reads back.
    const hostile = await startFakeModel({ models: [injected, "local-\u001b[2Jclear", "local-plain"] });
    try {
      const r = await runDl(["init", "--yes", "--probe", hostile.url, "--json"], env);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).model).toBe("local-plain");
      expect(readFileSync(settingsFile(home), "utf8").match(/^DELEGATE_LOCAL_URL=/gm)).toHaveLength(1);
      const s = await runDl(["status", "--json"], env);
      expect(JSON.parse(s.stdout).config.gateway.local_url).toBe(hostile.url);
    } finally {
      await hostile.stop();
    }
  });

  test("--endpoint of a usual port is listed once", async () => {
    const { env } = freshHome();
    const r = await runDl(["init", "--endpoint", "http://localhost:11434", "--model", "x", "--json"], env);
    const names = JSON.parse(r.stdout).servers.map((s: { name: string }) => s.name);
    expect(names.filter((n: string) => n === "Ollama" || n === "--endpoint")).toEqual(["--endpoint"]);
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
