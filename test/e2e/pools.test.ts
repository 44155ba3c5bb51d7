import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";

/**
 * Pools through the real product: several `dl serve` processes (one per Claude Code
 * window) share one slot folder, and the backend must never see more requests for a
 * model than its pool allows.
 */
type Result = { success: boolean; model: string; model_used: string; failed_over_from?: string; error?: string };

let fake: FakeModel;
let agentsDir: string;
let workdir: string;
let cacheDir: string;

beforeAll(async () => {
  fake = await startFakeModel();
  agentsDir = tempDir("agents");
  workdir = tempDir("work");
  cacheDir = tempDir("cache");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\n---\nHelp.\n");
});
afterAll(async () => {
  await fake?.stop();
});

const baseEnv = (extra: Record<string, string> = {}) => ({
  DELEGATE_LOCAL_URL: fake.anthropicUrl,
  DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  DELEGATE_CACHE_DIR: cacheDir,
  DELEGATE_FAILOVER_GRACE: "0.05",
  ...extra,
});

const call = (s: DlSession, model: string, task = "go") =>
  s.client.callTool(
    { name: "delegate_to_local_agent", arguments: { agent_name: "helper", task, workdir, model } },
    { timeout: 120_000 },
  );

describe("pools across dl serve processes", () => {
  test("4 servers, 20 dispatches at one 6-slot model: the backend never sees more than 6 at once", async () => {
    fake.reset();
    // Each answer waits until six are in flight at once, then all go: the pool must let
    // six through together (or this never ends), and the peak says whether it let more.
    let sixInFlight = () => {};
    const six = new Promise<void>((resolve) => {
      sixInFlight = resolve;
    });
    fake.always(async () => {
      if (fake.inFlight("qwen-3-8-max") >= 6) sixInFlight();
      await six;
      return reply.text("done", { delayMs: 50 });
    });
    const sessions = await Promise.all([0, 1, 2, 3].map(() => connectDl(baseEnv())));
    try {
      const results = await Promise.all(sessions.flatMap((s) => [0, 1, 2, 3, 4].map(() => call(s, "qwen-3-8-max"))));
      const peak = fake.peak("qwen-3-8-max");
      console.log(
        `pools: 4 dl serve processes, 20 dispatches at qwen-3-8-max (6 slots): backend peak ${peak}, requests ${fake.requests.length}`,
      );
      expect(results.every((r) => (r.structuredContent as Result).success)).toBe(true);
      expect(fake.requests).toHaveLength(20);
      expect(peak).toBeLessThanOrEqual(6);
      expect(peak).toBe(6);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  });

  test("a full pool fails over along the chain and says so", async () => {
    fake.reset();
    fake.always(reply.text("answered", { delayMs: 500 }));
    const s = await connectDl(baseEnv({ DELEGATE_CONCURRENCY_GLM_CODING_PLAN: "1" }));
    try {
      const [a, b] = await Promise.all([call(s, "glm-coding-plan-think"), call(s, "glm-coding-plan-think")]);
      const results = [a, b].map((r) => r.structuredContent as Result);
      const moved = results.find((r) => r.failed_over_from);
      expect(results.every((r) => r.success)).toBe(true);
      expect(moved?.failed_over_from).toBe("glm-coding-plan-think");
      expect(moved?.model_used).toBe("qwen-3-8-max");
      expect(fake.requests.map((q) => q.model).sort()).toEqual(["glm-coding-plan-think", "qwen-3-8-max"]);
    } finally {
      await s.close();
    }
  });

  test("a local model waits or fails but never leaves, even with an edited failover table", async () => {
    fake.reset();
    fake.always(reply.text("local answer", { delayMs: 600 }));
    const s = await connectDl(
      baseEnv({
        DELEGATE_CONCURRENCY_LOCAL_: "1",
        DELEGATE_QUEUE_GRACE: "0.2",
        DELEGATE_FAILOVER_CHAINS: JSON.stringify({ "local-private": ["deepseek-v4-flash", "glm-coding-plan"] }),
      }),
    );
    try {
      const [a, b] = await Promise.all([call(s, "local-private"), call(s, "local-private")]);
      const results = [a, b].map((r) => r.structuredContent as Result);
      expect(results.filter((r) => r.success)).toHaveLength(1);
      const refused = results.find((r) => !r.success);
      expect(refused?.error).toMatch(/DELEGATE_QUEUE_GRACE|DELEGATE_CONCURRENCY/);
      expect(fake.requests.every((q) => q.model === "local-private")).toBe(true);
    } finally {
      await s.close();
    }
  });

  test("a bad failover table stops start-up with one line", async () => {
    const r = await runDl(["serve"], baseEnv({ DELEGATE_FAILOVER_CHAINS: "{not json" }));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("DELEGATE_FAILOVER_CHAINS");
  });

  test("dl status shows every bucket and who holds a slot", async () => {
    const r = await runDl(["status", "--json"], baseEnv());
    const report = JSON.parse(r.stdout) as { pools: { bucket: string; size: number; in_use: number }[] };
    const buckets = report.pools.map((p) => p.bucket);
    for (const b of ["deepseek-v4-flash", "glm-coding-plan", "local-", "ornith", "qwen-3-8-max"])
      expect(buckets).toContain(b);
    expect(report.pools.find((p) => p.bucket === "local-")?.size).toBe(2);
  });
});

describe("bifrost gateway through dl serve", () => {
  test("a bad Bifrost URL stops start-up with one line", async () => {
    for (const url of ["ftp://gw:4010", "http://user:pw@gw:4010", "not a url"]) {
      const r = await runDl(["serve"], { DELEGATE_GATEWAY: "bifrost", DELEGATE_BIFROST_URL: url });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("DELEGATE_BIFROST_URL");
      expect(r.stderr).not.toContain("pw@");
    }
  });

  test("each lane goes to its base with /litellm paths and its own virtual key", async () => {
    const localGw = await startFakeModel();
    fake.reset();
    fake.always(reply.text("code lane"));
    localGw.always(reply.text("local lane"));
    const s = await connectDl(
      baseEnv({
        DELEGATE_GATEWAY: "bifrost",
        DELEGATE_BIFROST_URL: fake.url,
        DELEGATE_BIFROST_LOCAL_URL: localGw.url,
        DELEGATE_BIFROST_VK_CODE: "vk-code-123",
        DELEGATE_BIFROST_VK_LOCAL: "vk-local-456",
        DELEGATE_LOCAL_KEY: "sk-litellm-only",
      }),
    );
    try {
      const code = (await call(s, "glm-coding-plan")).structuredContent as Result & { final_response: string };
      const openai = (await call(s, "deepseek-v4-flash")).structuredContent as Result & { final_response: string };
      const local = (await call(s, "local-qwen-3-6-35b")).structuredContent as Result & { final_response: string };
      expect([code.final_response, openai.final_response, local.final_response]).toEqual([
        "code lane",
        "code lane",
        "local lane",
      ]);
      expect(fake.requests.map((q) => q.path)).toEqual(["/litellm/v1/messages", "/litellm/v1/chat/completions"]);
      expect(fake.requests.every((q) => q.headers["x-bf-vk"] === "vk-code-123")).toBe(true);
      expect(localGw.requests.map((q) => q.path)).toEqual(["/litellm/v1/messages"]);
      expect(localGw.requests[0]?.headers["x-bf-vk"]).toBe("vk-local-456");
      const all = [...fake.requests, ...localGw.requests];
      expect(all.some((q) => JSON.stringify(q.headers).includes("sk-litellm-only"))).toBe(false);
    } finally {
      await s.close();
      await localGw.stop();
    }
  });
});
