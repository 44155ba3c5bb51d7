import { expect, test } from "bun:test";
import { bucketFor, bucketSize, envKeyFor, modelBucketName } from "../../src/dispatch/buckets.ts";

test("longest matching prefix picks the bucket; variants share it", () => {
  expect(bucketFor("deepseek-v4-flash")).toBe("deepseek-v4-flash");
  expect(bucketFor("deepseek-v4-flash-max")).toBe("deepseek-v4-flash");
  expect(bucketFor("qwen-3-8-max-think")).toBe("qwen-3-8-max");
  expect(bucketFor("glm-coding-plan")).toBe("glm-coding-plan");
  expect(bucketFor("glm-coding-plan-think")).toBe("glm-coding-plan");
  expect(bucketFor("GLM-Coding-Plan-Max")).toBe("glm-coding-plan");
  expect(bucketFor("ornith-7b")).toBe("ornith");
  expect(bucketFor("local-qwen-3-6-35b")).toBe("local-");
  // Not covered by the table: a pool per model, named after it.
  expect(bucketFor("deepseek-v4-pro")).toBe("deepseek-v4-pro");
  expect(bucketFor("qwen-3-8")).toBe("qwen-3-8");
});

test("a longer entry beats a shorter one whatever the table order", () => {
  const table = [
    { prefix: "local-", size: 2 },
    { prefix: "local-big", size: 1 },
  ];
  expect(bucketFor("local-big-70b", table)).toBe("local-big");
  expect(bucketFor("local-small", table)).toBe("local-");
});

test("per-model bucket names are safe folder names", () => {
  expect(modelBucketName("anthropic/claude-x")).toBe("anthropic_claude-x");
  expect(modelBucketName("..")).toBe("_..");
  expect(modelBucketName("../../etc")).toBe("_.._.._etc");
  expect(modelBucketName("")).toBe("_");
  expect(modelBucketName("x".repeat(500)).length).toBeLessThanOrEqual(100);
});

test("sizes: table default, DELEGATE_CONCURRENCY_<BUCKET> override, default size for the rest", () => {
  const sizing = { defaultSize: 4, overrides: { GLM_CODING_PLAN: 3, LOCAL: 1, DEEPSEEK_V4_PRO: 9 } };
  expect(envKeyFor("glm-coding-plan")).toBe("GLM_CODING_PLAN");
  expect(envKeyFor("local-")).toBe("LOCAL_");
  expect(envKeyFor("gpt-5.1")).toBe("GPT_5_1");
  expect(bucketSize("glm-coding-plan", sizing)).toBe(3);
  expect(bucketSize("qwen-3-8-max", sizing)).toBe(6);
  // `local-` takes LOCAL_ or, more guessably, LOCAL; the exact key wins.
  expect(bucketSize("local-", sizing)).toBe(1);
  expect(bucketSize("local-", { defaultSize: 4, overrides: { LOCAL: 1, LOCAL_: 5 } })).toBe(5);
  expect(bucketSize("local-", { defaultSize: 4, overrides: {} })).toBe(2);
  expect(bucketSize("deepseek-v4-pro", sizing)).toBe(9);
  expect(bucketSize("some-model", sizing)).toBe(4);
});
