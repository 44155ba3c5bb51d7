import { describe, expect, test } from "bun:test";
import {
  announcesWork,
  isCodingAgent,
  resolveMaxTokens,
  resolveMaxTurns,
  resolveModel,
} from "../../src/agent/policy.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";

describe("policy", () => {
  test("max_turns: 25 auto, explicit wins, hard cap 40", () => {
    // The configured default a user who set nothing has (SETTINGS' DELEGATE_MAX_TURNS_CLOUD).
    const auto = defaultAgentSettings().defaultMaxTurns;
    expect(resolveMaxTurns(undefined, auto)).toBe(25);
    expect(resolveMaxTurns(undefined, 30)).toBe(30);
    expect(resolveMaxTurns(7, auto)).toBe(7);
    expect(resolveMaxTurns(100, auto)).toBe(40);
    expect(resolveMaxTurns(undefined, 99)).toBe(40);
    expect(resolveMaxTurns(0, auto)).toBe(25);
  });

  test("max_tokens: 65536 default, 150000 for -max tiers and reasoning aliases, clamped per provider, explicit wins", () => {
    expect(resolveMaxTokens({ model: "local-qwen-3-6-35b" })).toBe(65536);
    expect(resolveMaxTokens({ model: "glm-5.2" })).toBe(65536);
    expect(resolveMaxTokens({ model: "deepseek-v4-flash" })).toBe(150000);
    expect(resolveMaxTokens({ model: "minimax-m3-max" })).toBe(150000);
    expect(resolveMaxTokens({ model: "glm-5-max" })).toBe(131072);
    expect(resolveMaxTokens({ model: "qwen-3-max" })).toBe(65536);
    expect(resolveMaxTokens({ model: "claude-opus-max" })).toBe(128000);
    expect(resolveMaxTokens({ model: "model-maxwell" })).toBe(65536);
    expect(resolveMaxTokens({ model: "qwen-3-max", explicit: 200000 })).toBe(200000);
    expect(resolveMaxTokens({ model: "x", explicit: 1000 })).toBe(1000);
  });

  test("coding agents by whole name words", () => {
    for (const n of [
      "coder",
      "webdev",
      "backend-architect",
      "senior_frontend",
      "devops-automator",
      "security-engineer",
      "fullstack2",
    ]) {
      expect(isCodingAgent(n)).toBe(true);
    }
    for (const n of ["reviewer", "code-reviewer", "docs-writer", "backendless", "decoder"])
      expect(isCodingAgent(n)).toBe(false);
  });

  test("model: explicit, then coding model for coding agents, then default", () => {
    const base = { defaultModel: "def", codingModel: "coding" };
    expect(resolveModel({ ...base, agentName: "coder", explicit: "mine" })).toBe("mine");
    expect(resolveModel({ ...base, agentName: "coder" })).toBe("coding");
    expect(resolveModel({ ...base, agentName: "reviewer" })).toBe("def");
    expect(resolveModel({ defaultModel: "def", agentName: "coder" })).toBe("def");
  });

  test("announced work is recognised at the end of a reply, not in a finished report", () => {
    expect(announcesWork("I'll run the tests now.")).toBe(true);
    expect(announcesWork("Good. Let me check the config file:")).toBe(true);
    expect(announcesWork("The parser is fixed. Next, I will update the docs.")).toBe(true);
    expect(announcesWork("Now I'll write the migration.")).toBe(true);
    expect(announcesWork("Done: all 12 tests pass and the fix is committed.")).toBe(false);
    expect(announcesWork("Summary: fixed the bug. Let me know if you need more.")).toBe(false);
    expect(announcesWork("")).toBe(false);
  });
});
