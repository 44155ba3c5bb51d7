import { expect, test } from "bun:test";
import { normalizeModelName, whoAnswered } from "../../src/dispatch/answered.ts";

test("no note when the answerer is the alias, up to case and provider prefixes", () => {
  expect(whoAnswered("glm-coding-plan", { model: "glm-coding-plan", routing: {} })).toEqual({
    answered_by: "glm-coding-plan",
  });
  expect(whoAnswered("gpt-5", { model: "openai/GPT-5", routing: {} }).fallback_note).toBeUndefined();
  expect(normalizeModelName(" Anthropic/claude-x ")).toBe("claude-x");
  // The backend named nobody: nothing is claimed.
  expect(whoAnswered("glm-coding-plan", { model: "", routing: {} })).toEqual({ answered_by: "" });
});

test("a different answerer gives fallback_note; a routing header beats the body's model", () => {
  expect(whoAnswered("glm-5-3-flash", { model: "deepseek-flash", routing: {} }).fallback_note).toBe(
    "answered_by: deepseek-flash (requested glm-5-3-flash)",
  );
  const routed = whoAnswered("glm-coding-plan-think", {
    model: "glm-coding-plan-think",
    routing: { "x-bifrost-routing-info-provider": "deepseek", "x-bifrost-routing-info-model": "deepseek-v4-flash" },
  });
  expect(routed).toEqual({
    answered_by: "deepseek-v4-flash",
    fallback_note: "answered_by: deepseek-v4-flash (requested glm-coding-plan-think)",
  });
});

test("names from the server are one bounded line", () => {
  const r = whoAnswered("a", { model: `evil\nline ${"x".repeat(300)}`, routing: {} });
  expect(r.fallback_note).not.toContain("\n");
  expect(r.answered_by.length).toBeLessThanOrEqual(120);
});
