import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { liveWith } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";

/**
 * The agent runtime end to end: the compiled `dl serve`, the SDK's Client over stdio, and
 * a scripted fake model on 127.0.0.1. Each format reads a file, writes a file and runs a
 * failing command; the result must report what really happened.
 */
type Result = {
  success: boolean;
  final_response: string;
  agent_source: string;
  model: string;
  model_used: string;
  turns: number;
  bash_calls: number;
  bash_failures: number;
  last_bash_exit: number | null;
  error?: string;
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number };
  elapsed_s: number;
};

const KEY = "sk-e2e-secret-key";
let fake: FakeModel;
let agentsDir: string;
let session: DlSession;

function project(): string {
  const dir = tempDir("proj");
  writeFileSync(join(dir, "input.txt"), "alpha\nbeta\ngamma\n");
  return dir;
}

function scriptReadWriteFail(model: string) {
  fake.script(
    model,
    reply.thinking("Let me look at the input first.", reply.tool("read_file", { path: "input.txt" })),
    reply.thinking(
      "Now write the summary.",
      reply.tool("write_file", { path: "out/summary.txt", content: "3 lines\n" }),
    ),
    reply.thinking("Run the checks.", reply.tool("run_bash", { command: "echo checking; exit 3" })),
    reply.text("Wrote out/summary.txt; the check command failed with exit 3."),
  );
}

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
  agentsDir = tempDir("agents");
  writeFileSync(
    join(agentsDir, "helper.md"),
    "---\nname: helper\ndescription: general helper\n---\nYou are a careful helper.\n",
  );
  session = await connectDl({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_LOCAL_MODEL: "local-test-model",
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});
beforeEach(() => fake.reset());

async function delegate(args: Record<string, unknown>, opts: Parameters<DlSession["client"]["callTool"]>[1] = {}) {
  return session.client.callTool({ name: "delegate_to_local_agent", arguments: args }, opts);
}

describe("delegate_to_local_agent through dist/dl serve", () => {
  for (const [format, model] of [
    ["anthropic", "glm-5-test"],
    ["openai", "deepseek-v4-flash"],
  ] as const) {
    test(`${format} format: reads, writes, runs a failing command and reports the true exit code`, async () => {
      const dir = project();
      scriptReadWriteFail(model);
      const res = await delegate({ agent_name: "helper", task: "summarize input.txt", workdir: dir, model });
      expect(res.isError).toBeFalsy();
      const r = res.structuredContent as Result;
      expect(r.success).toBe(true);
      expect(r.agent_source).toBe("global");
      expect(r.turns).toBe(4);
      expect(r.bash_calls).toBe(1);
      expect(r.bash_failures).toBe(1);
      expect(r.last_bash_exit).toBe(3);
      expect(readFileSync(join(dir, "out", "summary.txt"), "utf8")).toBe("3 lines\n");
      // The model saw the file's real, line-numbered content in the tool result.
      const second = JSON.stringify(fake.requests[1]?.body);
      expect(second).toContain("beta");
      expect(fake.requests.every((q) => q.format === format)).toBe(true);
      expect(JSON.stringify(res)).not.toContain(KEY);
      const text = (res.content as { type: string; text: string }[])[0]!.text;
      expect(text).toContain("last exit 3");
    });
  }

  test("a project agent wins over the global one and is reported as such", async () => {
    const dir = project();
    mkdirSync(join(dir, ".claude", "agents"), { recursive: true });
    writeFileSync(join(dir, ".claude", "agents", "helper.md"), "---\nname: helper\n---\nProject-specific helper.\n");
    fake.script(reply.text("ok"));
    const r = (await delegate({ agent_name: "helper", task: "say ok", workdir: dir })).structuredContent as Result;
    expect(r.agent_source).toBe("project-agent");
    expect(JSON.stringify(fake.requests[0]?.body)).toContain("Project-specific helper.");
  });

  test("escapes through each tool: read_file and write_file refused, run_bash confined to the workdir and a clean environment", async () => {
    const dir = project();
    const outside = tempDir("outside");
    writeFileSync(join(outside, "secret.txt"), "do not read");
    fake.script(
      reply.tool("read_file", { path: join(outside, "secret.txt") }),
      reply.tool("read_file", { path: "../../../../../../etc/hostname" }),
      reply.tool("write_file", { path: join(outside, "planted.txt"), content: "x" }),
      reply.tool("write_file", { path: "../planted.txt", content: "x" }),
      // run_bash is not path-confined (see the README), but it runs in the workdir with an
      // allowlisted environment: the gateway key must not be among its variables.
      reply.tool("run_bash", { command: "pwd; env" }),
      reply.text("tried"),
    );
    const r = (await delegate({ agent_name: "helper", task: "try escaping", workdir: dir }))
      .structuredContent as Result;
    expect(r.turns).toBe(6);
    const bashResult = JSON.stringify(fake.requests[5]?.body);
    expect(bashResult).toContain(dir);
    expect(bashResult).toContain("PATH=");
    expect(bashResult).not.toContain(KEY);
    expect(bashResult).not.toContain("DELEGATE_LOCAL_KEY");
    expect(existsSync(join(outside, "planted.txt"))).toBe(false);
    expect(existsSync(join(dir, "..", "planted.txt"))).toBe(false);
    const results = fake.requests.slice(1, 5).map((q) => JSON.stringify(q.body));
    expect(results.join("")).not.toContain("do not read");
    for (const body of results.slice(0, 4)) expect(body).toContain("is outside the working directory");
  });

  test("progress notifications arrive after turns when the client asks for them", async () => {
    const dir = project();
    fake.script(
      reply.tool("run_bash", { command: "true" }),
      reply.tool("run_bash", { command: "true" }),
      reply.text("done"),
    );
    const seen: string[] = [];
    const res = await delegate(
      { agent_name: "helper", task: "two commands", workdir: dir },
      { onprogress: (p) => void seen.push(p.message ?? "") },
    );
    expect((res.structuredContent as Result).success).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.join("\n")).toContain("run_bash");
  });

  test("a bad argument is a clear error and the server stays up", async () => {
    const missing = await delegate({ agent_name: "helper" });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toContain("task");
    const badName = await delegate({ agent_name: "../etc/passwd", task: "x", workdir: project() });
    expect(badName.isError).toBe(true);
    expect(JSON.stringify(badName.content)).toContain("not allowed");
    const noAgent = await delegate({ agent_name: "nobody", task: "x", workdir: project() });
    expect(noAgent.isError).toBe(true);
    expect(JSON.stringify(noAgent.content)).toContain(".claude/agents/nobody.md");
    const badDir = await delegate({ agent_name: "helper", task: "x", workdir: "/definitely/not/here" });
    expect(badDir.isError).toBe(true);
    const home = await delegate({ agent_name: "helper", task: "x", workdir: process.env.HOME });
    expect(home.isError).toBe(true);
    expect(JSON.stringify(home.content)).toContain("refused");
    // dl's own state is off limits too: the slot pools' cache and the job stores.
    const cache = join(process.env.XDG_CACHE_HOME!, "claude-delegate-local", "slots");
    mkdirSync(cache, { recursive: true });
    const state = await delegate({ agent_name: "helper", task: "x", workdir: cache });
    expect(state.isError).toBe(true);
    expect(JSON.stringify(state.content)).toContain("overlaps dl's own state");
    expect((await session.client.listTools()).tools.length).toBeGreaterThan(3);
  });

  test("an MCP cancel aborts the loop and kills the running command's process group", async () => {
    const dir = project();
    const pidFile = join(dir, "sleeper.pid");
    fake.script(
      // Found by its argv's marker: as root the command sees its own pid namespace, not the host's.
      reply.tool("run_bash", { command: `sleep 300.${process.pid} & echo $! > ${pidFile}; wait` }),
      reply.text("never reached"),
    );
    const ac = new AbortController();
    const call = delegate({ agent_name: "helper", task: "sleep", workdir: dir }, { signal: ac.signal }).catch(
      (e: Error) => e,
    );
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", "the command to start");
    const sleeper = () => liveWith(`300.${process.pid}`).length > 0;
    if (!sleeper()) throw new Error(`sleeper died early; server stderr: ${session.stderr().slice(-2000)}`);
    ac.abort();
    const outcome = await call;
    expect(outcome).toBeInstanceOf(Error);
    // The grandchild must die with its group; wait for that rather than sleeping.
    await until(() => !sleeper(), "the cancelled command's process to die");
    // The loop stopped: the reply scripted for the next turn was never asked for.
    expect(fake.remaining()).toBe(1);
    // The server is still healthy afterwards.
    fake.reset();
    fake.script(reply.text("still here"));
    const r = (await delegate({ agent_name: "helper", task: "ping", workdir: dir })).structuredContent as Result;
    expect(r.final_response).toBe("still here");
  });
});

describe("delegate_batch", () => {
  test("4 tasks whose backend takes 1 s each finish in about 1 s, in input order", async () => {
    const dirs = [project(), project(), project(), project()];
    fake.always((req) => {
      const task = JSON.stringify(req.body).match(/task number (\d)/)?.[1] ?? "?";
      return reply.text(`answer ${task}`, { delayMs: 1000 });
    });
    const started = performance.now();
    const res = await session.client.callTool({
      name: "delegate_batch",
      // A cloud-style alias: its own 6-slot pool (the default local- pool has only 2).
      arguments: {
        tasks: dirs.map((d, i) => ({
          agent_name: "helper",
          task: `task number ${i}`,
          workdir: d,
          model: "glm-batch-test",
        })),
      },
    });
    const wall = (performance.now() - started) / 1000;
    const s = res.structuredContent as { results: Result[]; succeeded: number; elapsed_s: number };
    console.log(
      `delegate_batch: 4 tasks x 1 s backend → ${wall.toFixed(2)} s wall, elapsed_s ${s.elapsed_s}, fake peak ${fake.peak()}`,
    );
    expect(s.succeeded).toBe(4);
    expect(s.results.map((r) => r.final_response)).toEqual(["answer 0", "answer 1", "answer 2", "answer 3"]);
    expect(fake.peak()).toBe(4);
    expect(wall).toBeLessThan(2.5);
    expect(s.elapsed_s).toBeGreaterThanOrEqual(0.9);
  });

  test("one invalid task means no task starts", async () => {
    const res = await session.client.callTool({
      name: "delegate_batch",
      arguments: {
        tasks: [
          { agent_name: "helper", task: "fine", workdir: project() },
          { agent_name: "ghost", task: "x", workdir: project() },
        ],
      },
    });
    expect(res.isError).toBe(true);
    expect(JSON.stringify(res.content)).toContain("task 2 (ghost)");
    expect(fake.requests).toHaveLength(0);
  });

  test("delegate_batch and submit_agent number a refused task the same way, from 1", async () => {
    const dir = project();
    const tasks = [
      { agent_name: "helper", task: "fine", workdir: dir },
      { agent_name: "ghost", task: "x", workdir: dir },
    ];
    const texts: string[] = [];
    for (const name of ["delegate_batch", "submit_agent"]) {
      const res = (await session.client.callTool({ name, arguments: { tasks } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(res.isError).toBe(true);
      texts.push(res.content[0]?.text ?? "");
    }
    for (const text of texts) {
      expect(text).toMatch(/\btask 2\b/);
      expect(text).not.toMatch(/\btask [01]\b/);
    }
    expect(fake.requests).toHaveLength(0);
  });

  test("one task's failure does not fail the others; too many tasks is refused", async () => {
    fake.script("bad-model", reply.status(400, { body: '{"error":{"message":"model not found"}}' }));
    fake.script("good-model", reply.text("fine"));
    const res = await session.client.callTool({
      name: "delegate_batch",
      arguments: {
        tasks: [
          { agent_name: "helper", task: "a", workdir: project(), model: "good-model" },
          { agent_name: "helper", task: "b", workdir: project(), model: "bad-model" },
        ],
      },
    });
    const s = res.structuredContent as { results: Result[]; succeeded: number; failed: number };
    expect(s.succeeded).toBe(1);
    expect(s.failed).toBe(1);
    expect(s.results[0]?.success).toBe(true);
    expect(s.results[1]?.error).toContain("400");
    const many = await session.client.callTool({
      name: "delegate_batch",
      arguments: { tasks: Array.from({ length: 5 }, () => ({ agent_name: "helper", task: "x" })) },
    });
    expect(many.isError).toBe(true);
    expect(JSON.stringify(many.content)).toContain("at most 4");
  });
});

describe("delegate_to_provider", () => {
  test("loopback provider URLs are refused by the SSRF guard unless allowlisted; the key is never echoed", async () => {
    const refused = await session.client.callTool({
      name: "delegate_to_provider",
      arguments: {
        provider_url: fake.url,
        api_key: "sk-provider-secret",
        model: "glm-x",
        agent_name: "helper",
        task: "x",
        workdir: project(),
      },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/loopback|127\.0\.0\.1/);
    expect(JSON.stringify(refused)).not.toContain("sk-provider-secret");

    const allowed = await connectDl({
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
      DELEGATE_PROVIDER_ALLOW_HOSTS: "127.0.0.1",
    });
    try {
      fake.script(reply.text("from the provider"));
      const res = await allowed.client.callTool({
        name: "delegate_to_provider",
        arguments: {
          provider_url: fake.url,
          api_key: KEY,
          model: "glm-x",
          agent_name: "helper",
          task: "x",
          workdir: project(),
        },
      });
      const r = res.structuredContent as Result;
      expect(r.final_response).toBe("from the provider");
      expect(fake.requests[0]?.headers["x-api-key"]).toBe(KEY);
      expect(JSON.stringify(res)).not.toContain(KEY);
    } finally {
      await allowed.close();
    }
  });

  test("special-purpose ranges and IPv4 hidden in IPv6 tunnels are refused before any request", async () => {
    const port = new URL(fake.url).port;
    for (const host of [
      "[2002:7f00:1::]", // 6to4 carrying 127.0.0.1
      "[2002:a9fe:a9fe::]", // 6to4 carrying the metadata address
      "[2001:0:4136:e378:8000:63bf:80ff:fffe]", // Teredo carrying 127.0.0.1
      "[64:ff9b::7f00:1]", // NAT64 carrying 127.0.0.1
      "[::ffff:7f00:1]", // IPv4-mapped 127.0.0.1
      "[fec0::1]",
      "[2001:db8::1]",
      "192.0.2.1",
      "192.88.99.1",
    ]) {
      const res = await session.client.callTool({
        name: "delegate_to_provider",
        arguments: {
          provider_url: `http://${host}:${port}/v1`,
          api_key: "sk-provider-secret",
          model: "glm-x",
          agent_name: "helper",
          task: "x",
          workdir: project(),
        },
      });
      expect(res.isError).toBe(true);
      expect(JSON.stringify(res.content)).toContain("dl refuses such targets");
      expect(JSON.stringify(res)).not.toContain("sk-provider-secret");
    }
    expect(fake.requests).toHaveLength(0);
  });
});

describe("dl run", () => {
  const env = () => ({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  });

  test("prints the result, progress on stderr, exit 0 on success", async () => {
    const dir = project();
    fake.script(reply.tool("run_bash", { command: "true" }), reply.text("all good"));
    const r = await runDl(["run", "helper", "do it", "--workdir", dir, "--json"], env());
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as Result;
    expect(result.success).toBe(true);
    expect(result.final_response).toBe("all good");
    expect(r.stderr).toContain("run_bash");
  });

  test("exit 1 when the delegation fails, 2 on a bad argument", async () => {
    const dir = project();
    fake.script(reply.status(401));
    const failed = await runDl(["run", "helper", "do it", "--workdir", dir], env());
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("FAILED");
    const bad = await runDl(["run", "helper", "do it", "--workdir", dir, "--max-turns", "99"], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--max-turns");
    const ghost = await runDl(["run", "nobody", "do it", "--workdir", dir], env());
    expect(ghost.code).toBe(2);
    expect(ghost.stderr).toContain("nobody");
    const home = await runDl(["run", "helper", "do it", "--workdir", process.env.HOME!], env());
    expect(home.code).toBe(2);
  });

  test("DELEGATE_DISPATCH_TIMEOUT stops a whole delegation that runs too long", async () => {
    const dir = project();
    fake.script(reply.hang());
    const r = await runDl(["run", "helper", "do it", "--workdir", dir, "--json"], {
      ...env(),
      DELEGATE_DISPATCH_TIMEOUT: "1",
    });
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as Result;
    expect(result.stop_reason).toBe("timeout");
    expect(result.error).toContain("deadline");
  });
});
