import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectDl, type DlSession, requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { modernRequest } from "../helpers/modern.ts";

type Structured = Record<string, unknown>;

/** A tiny stand-in for a LiteLLM gateway's model list, which checks the key it is sent. */
function startModelsGateway(key: string) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname !== "/v1/models") return new Response("not found", { status: 404 });
      if (req.headers.get("authorization") !== `Bearer ${key}` || req.headers.get("x-api-key") !== key) {
        return Response.json({ error: "bad key" }, { status: 401 });
      }
      return Response.json({ data: [{ id: "local-qwen-3-6-35b" }, { id: "deepseek-v4-flash" }] });
    },
  });
}

describe("dl serve over stdio", () => {
  const gateway = startModelsGateway("sk-test-key-123");
  const agentsDir = tempDir("agents");
  let session: DlSession;

  beforeAll(async () => {
    writeFileSync(
      join(agentsDir, "coder.md"),
      "---\nname: coder\ndescription: Writes code\nmodel: local-coder\n---\nYou write code.\n",
    );
    writeFileSync(join(agentsDir, "broken.md"), "---\nname: [unclosed\ndescription: x\n---\nbody\n");
    session = await connectDl({
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
      DELEGATE_LOCAL_URL: `http://127.0.0.1:${gateway.port}/v1/messages`,
      DELEGATE_LOCAL_KEY: "sk-test-key-123",
    });
  });
  afterAll(async () => {
    await session?.close();
    gateway.stop(true);
  });

  test("initialize reports the server and its version", async () => {
    const info = session.client.getServerVersion();
    expect(info?.name).toBe("delegate-local");
    expect(info?.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("tools/list carries the foundation tools with schemas", async () => {
    const { tools } = await session.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("list_local_agents");
    expect(names).toContain("local_backend_status");
    for (const t of tools) expect(t.inputSchema.type).toBe("object");
  });

  test("tool descriptions kept in .txt files are embedded in the compiled binary", async () => {
    const { tools } = await session.client.listTools();
    const description = (name: string) => tools.find((t) => t.name === name)?.description ?? "";
    for (const t of tools) {
      expect(t.description?.trim()).toBe(t.description);
      expect(t.description?.length).toBeGreaterThan(100);
    }
    expect(description("delegate_batch")).toStartWith("Runs up to 4 delegate_to_local_agent tasks at once");
    expect(description("submit_codex")).toContain("watch");
    expect(description("submit_codex")).toEndWith("run the project's tests before merging.");
  });

  test("list_local_agents lists agents and a malformed one with its error", async () => {
    const res = await session.client.callTool({ name: "list_local_agents", arguments: {} });
    expect(res.isError).toBeFalsy();
    const s = res.structuredContent as Structured & { agents: { name: string; error?: string; model: string }[] };
    expect(s.count).toBe(2);
    const coder = s.agents.find((a) => a.name === "coder");
    expect(coder?.model).toBe("local-coder");
    const broken = s.agents.find((a) => a.name === "broken");
    expect(broken?.error).toContain("broken.md:");
  });

  test("list_local_agents with a workdir: the project's agents and skills first, hiding a global one of the same name", async () => {
    const project = tempDir("project");
    mkdirSync(join(project, ".claude", "agents"), { recursive: true });
    mkdirSync(join(project, ".claude", "skills", "deploy"), { recursive: true });
    writeFileSync(join(project, ".claude", "agents", "coder.md"), "---\ndescription: the project's coder\n---\nx\n");
    writeFileSync(join(project, ".claude", "skills", "deploy", "SKILL.md"), "---\ndescription: ships it\n---\nx\n");
    const res = await session.client.callTool({ name: "list_local_agents", arguments: { workdir: project } });
    const s = res.structuredContent as { agents: { name: string; source: string; description: string }[] };
    expect(s.agents.map((a) => [a.name, a.source])).toEqual([
      ["coder", "project-agent"],
      ["deploy", "project-skill"],
      ["broken", "global"],
    ]);
    expect(s.agents[0]!.description).toBe("the project's coder");
  });

  test("local_backend_status lists the gateway's models and never shows the key", async () => {
    const res = await session.client.callTool({ name: "local_backend_status", arguments: {} });
    const s = res.structuredContent as Structured & { backends: { models: string[]; reachable: boolean }[] };
    expect(s.healthy).toBe(true);
    expect(s.backends[0]?.reachable).toBe(true);
    expect(s.backends[0]?.models).toEqual(["deepseek-v4-flash", "local-qwen-3-6-35b"]);
    expect(JSON.stringify(res)).not.toContain("sk-test-key-123");
  });

  test("a task's field given beside tasks (allow_over_quota on submit_codex) is refused by name, not dropped", async () => {
    const res = await session.client.callTool({
      name: "submit_codex",
      arguments: { tasks: [{ task: "x", workdir: tempDir("w") }], allow_over_quota: true },
    });
    expect(res.isError).toBe(true);
    // Where it goes, in the structured result the model reads.
    expect(res.structuredContent).toMatchObject({
      failure_kind: "invalid_arguments",
      error: expect.stringContaining(
        "allow_over_quota is a field of each task, not of the call: put it inside the task it is for (tasks[0].allow_over_quota)",
      ),
    });
    const other = await session.client.callTool({
      name: "submit_codex",
      arguments: { tasks: [{ task: "x", workdir: tempDir("w") }], colour: "red" },
    });
    expect(JSON.stringify(other.structuredContent)).toContain("unknown field colour: only tasks goes here");
  });

  test("an unknown tool is refused and the server stays up", async () => {
    const unknown = await session.client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: Error) => e);
    expect(unknown instanceof Error ? unknown.message : JSON.stringify(unknown)).toContain("no_such_tool");
    const again = await session.client.listTools();
    expect(again.tools.length).toBeGreaterThan(1);
  });
});

describe("local_backend_status when the gateway is down", () => {
  test("names the URL it tried", async () => {
    const dead = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const port = dead.port;
    dead.stop(true);
    const s = await connectDl({ DELEGATE_LOCAL_URL: `http://127.0.0.1:${port}/v1/messages` });
    try {
      const res = await s.client.callTool({ name: "local_backend_status", arguments: {} });
      const st = res.structuredContent as { healthy: boolean; backends: { error?: string }[] };
      expect(st.healthy).toBe(false);
      expect(st.backends[0]?.error).toContain(`127.0.0.1:${port}`);
    } finally {
      await s.close();
    }
  });
});

describe("dl serve lifecycle", () => {
  const spawnServe = () =>
    Bun.spawn([requireBinary(), "serve"], { env: testEnv(), stdin: "pipe", stdout: "pipe", stderr: "pipe" });

  test("exits 0 when stdin closes", async () => {
    const p = spawnServe();
    p.stdin.end();
    expect(await p.exited).toBe(0);
  });

  test("requests written just before stdin closes are all answered (a script piping into dl serve)", async () => {
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: init },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "ping" },
    ];
    const p = spawnServe();
    // Written and closed in one go, as `printf … | dl serve` does.
    p.stdin.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    p.stdin.end();
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    const ids = out
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { id?: number }).id);
    expect(ids.filter((id) => id !== undefined)).toEqual([1, 2, 3]);
  });

  test("2026-07-28: requests written just before stdin closes are all answered", async () => {
    const lines = [
      modernRequest(1, "server/discover"),
      modernRequest(2, "tools/list"),
      modernRequest(3, "tools/call", { name: "list_local_agents", arguments: {} }),
    ];
    const p = spawnServe();
    p.stdin.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    p.stdin.end();
    const out = await new Response(p.stdout).text();
    expect(await p.exited).toBe(0);
    const answers = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id?: number; result?: { supportedVersions?: string[] } });
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(answers[0]!.result?.supportedVersions).toContain("2026-07-28");
  });

  test("a client that closes stdout ends the server cleanly, with no unhandled error", async () => {
    const p = spawnServe();
    const ask = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })}\n`;
    p.stdin.write(ask);
    p.stdin.flush();
    const reader = p.stdout.getReader();
    await reader.read(); // serving; now the client stops reading and closes its end
    await reader.cancel();
    // Enough to overflow the pipe, so the next writes meet EPIPE.
    for (let i = 0; i < 40; i++) p.stdin.write(ask);
    p.stdin.flush();
    expect(await p.exited).toBe(0);
    const err = await new Response(p.stderr).text();
    expect(err).not.toContain("EPIPE");
    expect(err).not.toMatch(/unhandled|Unhandled/);
  });

  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    test(`exits 0 on ${sig}`, async () => {
      const p = spawnServe();
      // Wait until it serves: an initialize answer proves the signal handlers are installed.
      p.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
      );
      p.stdin.flush();
      const reader = p.stdout.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('"id":1');
      p.kill(sig);
      expect(await p.exited).toBe(0);
    });
  }
});

describe("configuration errors", () => {
  test("DELEGATE_GATEWAY=nope: serve exits 2 with one line naming the variable", async () => {
    const r = await runDl(["serve"], { DELEGATE_GATEWAY: "nope" });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("DELEGATE_GATEWAY");
    expect(r.stderr).toContain("litellm, bifrost");
  });

  test("non-numeric DELEGATE_CODEX_MAX_CONCURRENT: serve and status exit 2", async () => {
    for (const cmd of ["serve", "status"]) {
      const r = await runDl([cmd], { DELEGATE_CODEX_MAX_CONCURRENT: "many" });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain('DELEGATE_CODEX_MAX_CONCURRENT="many"');
    }
  });
});

describe("CLI surface", () => {
  test("--version prints the package version, the git commit and the build target; --json the same as JSON", async () => {
    const pkg = (await Bun.file(join(import.meta.dir, "..", "..", "package.json")).json()) as { version: string };
    const host = `${process.platform}-${process.arch}`;
    const r = await runDl(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^dl ${pkg.version.replaceAll(".", "\\.")} \\(commit ([0-9a-f]{12}(-dirty)?|unknown), ${host}\\)\n$`),
    );
    const j = await runDl(["--version", "--json"]);
    expect(j.code).toBe(0);
    const info = JSON.parse(j.stdout) as { version: string; commit: string; target: string };
    expect(info).toEqual({
      version: pkg.version,
      // "unknown" when built outside a git checkout (a source tarball, the mutation runner's copy).
      commit: expect.stringMatching(/^([0-9a-f]{12}(-dirty)?|unknown)$/),
      target: host,
    });
    expect(r.stdout).toContain(info.commit);
    const status = JSON.parse((await runDl(["status", "--json"])).stdout) as Record<string, unknown>;
    expect({ version: status.version, commit: status.commit, target: status.target }).toEqual(info);
    expect((await runDl(["status"])).stdout.split("\n")[0]).toStartWith(r.stdout.trim());
    const bad = await runDl(["--version", "--yaml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unexpected argument "--yaml"');
  });

  test("--help lists the working commands; an unknown command exits 2", async () => {
    const r = await runDl(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("serve");
    expect(r.stdout).toContain("status");
    const bad = await runDl(["frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown command");
  });

  test("the binary ignores a bunfig.toml and .env in its working directory", async () => {
    const dir = tempDir("autoload");
    writeFileSync(join(dir, ".env"), "DELEGATE_GATEWAY=nope\n");
    writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./boom.ts"]\n');
    writeFileSync(join(dir, "boom.ts"), "throw new Error('bunfig was loaded');\n");
    // serve reads its config at once: a loaded .env would make it exit 2, a loaded bunfig throw.
    const proc = Bun.spawn([requireBinary(), "serve"], {
      cwd: dir,
      env: testEnv(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stderr).text()).not.toContain("bunfig was loaded");
  });
});

describe("dl status", () => {
  test("--json is healthy against a live gateway, redacts the key, exits 0", async () => {
    const gw = startModelsGateway("sk-status-key");
    try {
      const r = await runDl(["status", "--json"], {
        DELEGATE_LOCAL_URL: `http://127.0.0.1:${gw.port}/v1/messages`,
        DELEGATE_LOCAL_KEY: "sk-status-key",
      });
      expect(r.code).toBe(0);
      const report = JSON.parse(r.stdout) as {
        healthy: boolean;
        config: { backend: { key: string } };
        state_dirs: { writable: boolean }[];
      };
      expect(report.healthy).toBe(true);
      expect(report.config.backend.key).toBe("<redacted>");
      expect(report.state_dirs.every((d) => d.writable)).toBe(true);
      expect(r.stdout + r.stderr).not.toContain("sk-status-key");
    } finally {
      gw.stop(true);
    }
  });

  test("a LiteLLM user's malformed Bifrost settings stop nothing; under bifrost they are refused by name", async () => {
    const gw = startModelsGateway("sk-status-key");
    const stray = {
      DELEGATE_LOCAL_URL: `http://127.0.0.1:${gw.port}/v1/messages`,
      DELEGATE_LOCAL_KEY: "sk-status-key",
      DELEGATE_BIFROST_URL: "not a url",
      DELEGATE_BIFROST_LOCAL_URL: "ftp://h",
      DELEGATE_BIFROST_API: "grpc",
    };
    try {
      const ok = await runDl(["status", "--json"], stray);
      expect(ok.stderr).toBe("");
      expect(ok.code).toBe(0);
      expect((JSON.parse(ok.stdout) as { healthy: boolean }).healthy).toBe(true);

      const refused = await runDl(["status"], { ...stray, DELEGATE_GATEWAY: "bifrost" });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        'dl: DELEGATE_BIFROST_URL="not a url" is invalid: expected an http(s) URL with a host and no credentials (not a valid URL); fix it, then run dl status\n',
      );
    } finally {
      gw.stop(true);
    }
  });

  test("an unreachable backend or unwritable state dir exits 1 and says which check failed", async () => {
    const blocker = join(tempDir("ro"), "file");
    writeFileSync(blocker, "not a directory");
    const r = await runDl(["status"], {
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9/v1/messages",
      DELEGATE_CODEX_STATE_DIR: join(blocker, "sub"),
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("failed checks:");
    expect(r.stdout).toContain("backend litellm");
    expect(r.stdout).toContain("codex jobs");
  });
});
