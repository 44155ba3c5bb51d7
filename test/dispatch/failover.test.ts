import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bucketFor } from "../../src/dispatch/buckets.ts";
import { chainFor, DEFAULT_CHAINS, isPinned, parseFailoverChains } from "../../src/dispatch/failover.ts";
import { isDlError } from "../../src/errors.ts";
import { testSettings } from "./util.ts";

test("the default chains are the reference's", () => {
  expect(chainFor("glm-coding-plan-think", DEFAULT_CHAINS, bucketFor)).toEqual(["qwen-3-8-max", "deepseek-v4-flash"]);
  expect(chainFor("deepseek-v4-flash", DEFAULT_CHAINS, bucketFor)).toEqual(["glm-coding-plan-think", "qwen-3-8-max"]);
  expect(chainFor("qwen-3-8-max", DEFAULT_CHAINS, bucketFor)).toEqual([]);
});

test("pinned models never leave and are never entered, even from an edited table", () => {
  const edited = parseFailoverChains(
    JSON.stringify({
      "local-qwen-3-6-35b": ["deepseek-v4-flash", "glm-coding-plan-think"],
      "ornith-7b": ["qwen-3-8-max"],
      "gpt-6.1-terra": ["glm-coding-plan"],
      "codex-mini": ["glm-coding-plan"],
      "deepseek-v4-flash": ["local-qwen-3-6-35b", "ORNITH-x", "gpt-5", "codex-mini", "qwen-3-8-max"],
    }),
  );
  for (const m of ["local-qwen-3-6-35b", "ornith-7b", "gpt-6.1-terra", "codex-mini"]) {
    expect(isPinned(m)).toBe(true);
    expect(chainFor(m, edited, bucketFor)).toEqual([]);
  }
  expect(chainFor("deepseek-v4-flash", edited, bucketFor)).toEqual(["qwen-3-8-max"]);
});

test("self, repeats and targets in the origin's own pool are dropped", () => {
  const chains = {
    "glm-coding-plan-think": [
      "glm-coding-plan-think",
      "glm-coding-plan-max",
      "qwen-3-8-max",
      "QWEN-3-8-MAX",
      "deepseek-v4-flash",
    ],
  };
  expect(chainFor("glm-coding-plan-think", chains, bucketFor)).toEqual(["qwen-3-8-max", "deepseek-v4-flash"]);
});

test("DELEGATE_FAILOVER_CHAINS merges over the defaults; [] turns failover off; a file works too", () => {
  const merged = parseFailoverChains('{"glm-5":["qwen-3-8-max"],"deepseek-v4-flash":[]}');
  expect(merged["glm-5"]).toEqual(["qwen-3-8-max"]);
  expect(merged["deepseek-v4-flash"]).toEqual([]);
  expect(merged["glm-coding-plan-think"]).toEqual(["qwen-3-8-max", "deepseek-v4-flash"]);
  expect(parseFailoverChains(undefined)).toBe(DEFAULT_CHAINS);
  expect(parseFailoverChains("  ")).toBe(DEFAULT_CHAINS);

  const file = join(testSettings().slotsDir, "chains.json");
  writeFileSync(file, '{"qwen-3-8-max":["deepseek-v4-flash"]}');
  expect(parseFailoverChains(file)["qwen-3-8-max"]).toEqual(["deepseek-v4-flash"]);
});

test("a bad DELEGATE_FAILOVER_CHAINS is one bad_config line naming the variable", () => {
  const cases = ["{not json", "[1,2]", '{"a":"b"}', '{"a":[1]}', '{"":["x"]}', "/nonexistent/chains.json"];
  for (const raw of cases) {
    let err: unknown;
    try {
      parseFailoverChains(raw);
    } catch (e) {
      err = e;
    }
    expect(isDlError(err, "bad_config")).toBe(true);
    const msg = (err as Error).message;
    expect(msg).toStartWith("DELEGATE_FAILOVER_CHAINS is invalid: ");
    expect(msg).not.toContain("\n");
  }
});
