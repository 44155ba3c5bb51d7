import { expect, test } from "bun:test";
import { join } from "node:path";
import { parseAgentFile } from "../../src/agent/frontmatter.ts";
import type { Agent } from "../../src/agent/lookup.ts";
import { buildSystemPrompt, CONTEXT_SCOPE_HINT } from "../../src/agent/prompt.ts";
import { buildTools } from "../../src/agent/tools/index.ts";
import type { ToolSpec } from "../../src/backends/types.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";

const agent: Agent = {
  name: "reviewer",
  file: "/x/reviewer.md",
  source: "project-agent",
  meta: { name: "reviewer", description: "Reviews diffs for bugs.", raw: {} },
  body: "Be strict. Cite line numbers.",
};

const readTool: ToolSpec = {
  name: "read_file",
  description: "Read a file.",
  input_schema: { type: "object", properties: {} },
};

test("the system prompt carries identity, tools, rules, hint and the body, then the run's workdir, budget and tag", () => {
  const p = buildSystemPrompt({ agent, workdir: "/abs/work", model: "glm-5", maxTurns: 17, tools: [readTool] });
  expect(p).toContain('"reviewer" agent');
  expect(p).toContain("Reviews diffs for bugs.");
  expect(p).toContain("- read_file: Read a file.");
  expect(p).toContain(CONTEXT_SCOPE_HINT);
  expect(p).toContain("offset/limit");
  // What varies per run closes the prompt, after the agent's own instructions.
  const run = p.indexOf("--- This run ---");
  expect(p.indexOf("Be strict. Cite line numbers.")).toBeLessThan(run);
  expect(p.indexOf(CONTEXT_SCOPE_HINT)).toBeLessThan(p.indexOf("Be strict."));
  expect(p.slice(run)).toContain("Working directory (absolute): /abs/work");
  expect(p.slice(run)).toContain("at most 17 turns");
  expect(p.split("\n").at(-1)).toBe("[dl-agent:reviewer source:project-agent model:glm-5]");
});

test("the example coder on two worktrees and two models shares >= 95% of its system prompt and all its tools", async () => {
  const parsed = await parseAgentFile(join(import.meta.dir, "..", "..", "examples", "agents", "coder.md"));
  const coder: Agent = { ...parsed, name: "coder", file: "coder.md", source: "project-agent" };
  const tools = () =>
    [...buildTools({ bash: { ...defaultAgentSettings().bash, baseEnv: {} } }).values()].map((t) => t.spec);
  const a = buildSystemPrompt({
    agent: coder,
    workdir: "/repo/.worktrees/task-a",
    model: "local-qwen",
    maxTurns: 25,
    tools: tools(),
  });
  const b = buildSystemPrompt({
    agent: coder,
    workdir: "/repo/.worktrees/task-bb",
    model: "glm-5.2",
    maxTurns: 40,
    tools: tools(),
  });
  let same = 0;
  while (same < a.length && a[same] === b[same]) same++;
  expect(same / Math.max(a.length, b.length)).toBeGreaterThanOrEqual(0.95);
  expect(a.slice(0, same)).toContain(coder.body.trim().slice(0, 200));
  expect(JSON.stringify(tools())).toBe(JSON.stringify(tools()));
});

test("without tools the prompt says so", () => {
  const p = buildSystemPrompt({ agent, workdir: "/w", model: "m", maxTurns: 1, tools: [] });
  expect(p).toContain("no tools");
  expect(p).not.toContain("Tools you can call");
});
