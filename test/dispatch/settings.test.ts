import { expect, test } from "bun:test";
import { parseConfig } from "../../src/config.ts";
import { bucketSize } from "../../src/dispatch/buckets.ts";
import { dispatchSettingsFromConfig } from "../../src/dispatch/pools.ts";
import { isDlError } from "../../src/errors.ts";

const base = {
  HOME: process.env.HOME,
  DELEGATE_TEST_ISOLATION: "1",
  DELEGATE_TEST_ISOLATION_ROOT: process.env.DL_TEST_ROOT,
};

test("settings come from the config: pool root, sizes, graces (fractions), chains", () => {
  const s = dispatchSettingsFromConfig(
    parseConfig({
      ...base,
      DELEGATE_CONCURRENCY_GLM_CODING_PLAN: "4",
      DELEGATE_CONCURRENCY_LOCAL_: "1",
      DELEGATE_CONCURRENCY_DEFAULT: "3",
      DELEGATE_QUEUE_GRACE: "0.25",
      DELEGATE_FAILOVER_GRACE: "0.05",
      DELEGATE_FAILOVER_CHAINS: '{"glm-5":["qwen-3-8-max"]}',
    }),
  );
  expect(s.slotsDir).toEndWith("/slots");
  expect(s.slotsDir.startsWith(process.env.DL_TEST_ROOT!)).toBe(true);
  expect(bucketSize("glm-coding-plan", s.sizing)).toBe(4);
  expect(bucketSize("local-", s.sizing)).toBe(1);
  expect(bucketSize("mimo-v2", s.sizing)).toBe(3);
  expect(s.queueGraceS).toBe(0.25);
  expect(s.failoverGraceS).toBe(0.05);
  expect(s.chains["glm-5"]).toEqual(["qwen-3-8-max"]);
  expect(s.chains["deepseek-v4-flash"]).toEqual(["glm-coding-plan-think", "qwen-3-8-max"]);
});

test("a bad DELEGATE_FAILOVER_CHAINS fails as bad_config when the settings are built", () => {
  const c = parseConfig({ ...base, DELEGATE_FAILOVER_CHAINS: "{oops" });
  let err: unknown;
  try {
    dispatchSettingsFromConfig(c);
  } catch (e) {
    err = e;
  }
  expect(isDlError(err, "bad_config")).toBe(true);
});
