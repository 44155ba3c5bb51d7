import { expect, test } from "bun:test";
import type { Agent } from "../../src/agent/lookup.ts";
import { buildSystemPrompt, CONTEXT_SCOPE_HINT } from "../../src/agent/prompt.ts";

const agent: Agent = {
  name: "reviewer",
  file: "/x/reviewer.md",
  source: "project-agent",
  meta: { name: "reviewer", description: "Reviews diffs for bugs.", raw: {} },
  body: "Be strict. Cite line numbers.",
};

test("the system prompt carries tag, identity, workdir, tools, budget, hint, then the body", () => {
  const p = buildSystemPrompt({
    agent,
    workdir: "/abs/work",
    model: "glm-5",
    maxTurns: 17,
    tools: [{ name: "read_file", description: "Read a file.", input_schema: { type: "object", properties: {} } }],
  });
  expect(p.split("\n")[0]).toBe("[dl-agent:reviewer source:project-agent model:glm-5]");
  expect(p).toContain('"reviewer" agent');
  expect(p).toContain("Reviews diffs for bugs.");
  expect(p).toContain("Working directory (absolute): /abs/work");
  expect(p).toContain("- read_file: Read a file.");
  expect(p).toContain("at most 17 turns");
  expect(p).toContain(CONTEXT_SCOPE_HINT);
  expect(p).toContain("offset/limit");
  // The agent's own instructions come last, after everything dl adds.
  expect(p.endsWith("Be strict. Cite line numbers.")).toBe(true);
  expect(p.indexOf(CONTEXT_SCOPE_HINT)).toBeLessThan(p.indexOf("Be strict."));
});

test("without tools the prompt says so", () => {
  const p = buildSystemPrompt({ agent, workdir: "/w", model: "m", maxTurns: 1, tools: [] });
  expect(p).toContain("no tools");
  expect(p).not.toContain("Tools you can call");
});
