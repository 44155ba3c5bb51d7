import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * The usage ledger through dist/dl: delegations on three models (one priced by the user's
 * LiteLLM-shaped price table, one marked flat-rate, one neither), with cache reads; then
 * `dl usage` sums them by model with the cache-hit share and each cost's state.
 */
const KEY = "sk-usage-key-0123456789";
let fake: FakeModel;
let root: string;
let session: DlSession;
let env: Record<string, string>;

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  root = tempDir("usage");
  const prices = join(root, "model_prices_and_context_window.json");
  writeFileSync(
    prices,
    JSON.stringify({
      sample_spec: { max_tokens: "set to max", input_cost_per_token: 0 },
      "cloud-priced": {
        input_cost_per_token: 0.000003,
        output_cost_per_token: 0.000015,
        cache_read_input_token_cost: 0.0000003,
        litellm_provider: "anthropic",
      },
    }),
  );
  const agentsDir = join(root, "agents");
  await Bun.write(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nHelp.\n");
  env = {
    // Its own user cache: the stores registry there lists this file's server only.
    XDG_CACHE_HOME: join(root, "cache"),
    DELEGATE_AGENT_STATE_DIR: join(root, "agent-state"),
    DELEGATE_PRICES_FILE: prices,
    DELEGATE_FLAT_RATE_MODELS: "local-*",
  };
  session = await connectDl({
    ...env,
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

type Cost = { state: string; usd: number | null };
let repos = 0;
async function delegate(model: string, usage: { input: number; cacheRead: number; output: number }): Promise<Cost> {
  fake.always(reply.text("ok", { usage }));
  const r = await callTool<{ cost: Cost; success: boolean }>(session, "delegate_to_local_agent", {
    agent_name: "helper",
    task: "say ok",
    workdir: makeRepo(root, `repo-${++repos}`).repo,
    model,
  });
  expect(r.data.success).toBe(true);
  return r.data.cost;
}

describe("dl usage", () => {
  test("sums tokens by model with the cache-hit share, and states each cost's kind", async () => {
    expect(await delegate("cloud-priced", { input: 1000, cacheRead: 3000, output: 100 })).toEqual({
      state: "priced",
      usd: expect.closeTo(0.0054, 6), // 1000 × 3e-6 + 100 × 1.5e-5 + 3000 × 3e-7
    });
    await delegate("cloud-priced", { input: 1000, cacheRead: 1000, output: 100 });
    expect(await delegate("local-qwen", { input: 500, cacheRead: 0, output: 50 })).toEqual({
      state: "included",
      usd: 0,
    });
    expect(await delegate("mystery-model", { input: 200, cacheRead: 0, output: 20 })).toEqual({
      state: "unknown",
      usd: null,
    });

    const r = await runDl(["usage", "--json"], env);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      groups: {
        key: string;
        runs: number;
        input_tokens: number;
        cache_read_tokens: number;
        output_tokens: number;
        cache_hit_share: number;
        cost: Cost;
      }[];
      total: { runs: number; cost: Cost };
    };
    const by = new Map(report.groups.map((g) => [g.key, g]));
    expect(by.get("cloud-priced")).toMatchObject({
      runs: 2,
      input_tokens: 2000,
      cache_read_tokens: 4000,
      output_tokens: 200,
      cache_hit_share: 0.667,
      cost: { state: "priced", usd: expect.closeTo(0.0102, 6) },
    });
    expect(by.get("local-qwen")?.cost).toEqual({ state: "included", usd: 0 });
    expect(by.get("mystery-model")?.cost).toEqual({ state: "unknown", usd: null });
    expect(report.total.runs).toBe(4);
    expect(report.total.cost.state).toBe("partial");

    const text = await runDl(["usage", "--by", "kind"], env);
    expect(text.stdout).toMatch(/delegate_to_local_agent +4 /);
    expect(text.stdout).toContain("partial");
    expect(text.stdout).not.toContain("█"); // piped: a plain table
    const plain = await runDl(["usage"], env);
    expect(plain.stdout).toMatch(/mystery-model +1 +200 +0 +0% +20 +unknown/);
    expect(plain.stdout).toMatch(/local-qwen +1 .* included/);
    // A person's header, not an ISO stamp; unknown costs say how to give dl prices.
    expect(plain.stdout.split("\n")[0]).toMatch(/^since 7d ago \(\d{4}-\d\d-\d\d \d\d:\d\d\), by model$/);
    expect(plain.stdout).toContain("COST unknown: dl has no price for those models. Set DELEGATE_PRICES_FILE");
    expect(plain.stdout).toContain("DELEGATE_FLAT_RATE_MODELS");
    // One key style in --json: the same token names as every result's usage.
    const keys = Object.keys(report.groups[0]!);
    expect(keys).toContain("cache_read_tokens");
    expect(keys).not.toContain("cache_read");
  }, 60_000);

  test("bad flags and a bad price file are refused (exit 2)", async () => {
    expect((await runDl(["usage", "--since", "a week"], env)).code).toBe(2);
    expect((await runDl(["usage", "--by", "colour"], env)).code).toBe(2);
    const bad = await runDl(["usage"], { ...env, DELEGATE_PRICES_FILE: join(root, "missing.json") });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("DELEGATE_PRICES_FILE");
  });
});
