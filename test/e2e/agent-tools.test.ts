import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { tempDir } from "../helpers/dl.ts";
import { connectInProcess, type InProcessSession } from "../helpers/in-process.ts";

/**
 * Issue 10 item 2: an agent's `tools:` frontmatter decides which tools the model is
 * offered and may call, through dl serve's server (in process) with the real example
 * agents.
 */
const EXAMPLES = resolve(import.meta.dir, "..", "..", "examples", "agents");
let fake: FakeModel;
let session: InProcessSession;

type Entry = { name: string; tools?: string[]; warnings?: string[] };

beforeAll(async () => {
  fake = await startFakeModel();
  const agentsDir = tempDir("agents");
  for (const f of readdirSync(EXAMPLES)) copyFileSync(join(EXAMPLES, f), join(agentsDir, f));
  writeFileSync(join(agentsDir, "odd.md"), "---\nname: odd\ntools: Read, Grep, WebFetch, Frobnicate\n---\nOdd.\n");
  writeFileSync(join(agentsDir, "plain.md"), "---\nname: plain\n---\nNo tools line.\n");
  session = await connectInProcess({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_LOCAL_MODEL: "local-test-model",
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});
beforeEach(() => fake.reset());

const offeredTools = (i: number) =>
  ((fake.requests[i]?.body.tools as { name: string }[] | undefined) ?? []).map((t) => t.name).sort();

describe("agent tools: frontmatter through dl serve's tools", () => {
  test("the example reviewer (tools: Read, Grep, Glob) is read-only: never offered write_file, and a call to it is refused", async () => {
    const dir = tempDir("proj");
    fake.script(
      reply.tool("write_file", { path: "planted.txt", content: "edited" }),
      reply.text("I could not write; review done."),
    );
    const res = await session.client.callTool({
      name: "delegate_to_local_agent",
      arguments: { agent_name: "reviewer", task: "review", workdir: dir },
    });
    expect(res.isError).toBeFalsy();
    expect(offeredTools(0)).toEqual(["list_files", "read_file", "search_files"]);
    expect(existsSync(join(dir, "planted.txt"))).toBe(false);
    const second = JSON.stringify(fake.requests[1]?.body);
    expect(second).toContain("write_file is not available to agent 'reviewer'");
    expect(second).toContain('"is_error":true');
  });

  test("the example coder (tools: Read, Write, Edit, Grep, Glob, Bash) and an agent without a tools: line get every tool", async () => {
    const dir = tempDir("proj");
    fake.script(reply.text("ok"), reply.text("ok"));
    for (const agent_name of ["coder", "plain"]) {
      await session.client.callTool({
        name: "delegate_to_local_agent",
        arguments: { agent_name, task: "t", workdir: dir },
      });
    }
    const all = ["edit_file", "list_files", "read_file", "run_bash", "search_files", "write_file"];
    expect(offeredTools(0)).toEqual(all);
    expect(offeredTools(1)).toEqual(all);
  });

  test("Grep maps to search_files (not a shell); unknown names are warnings in list_local_agents", async () => {
    const res = await session.client.callTool({ name: "list_local_agents", arguments: {} });
    const agents = (res.structuredContent as { agents: Entry[] }).agents;
    const by = (n: string) => agents.find((a) => a.name === n)!;
    expect(by("reviewer").tools?.sort()).toEqual(["list_files", "read_file", "search_files"]);
    expect(by("reviewer").warnings).toBeUndefined();
    expect(by("plain").tools).toBeUndefined();
    expect(by("odd").tools).toEqual(["read_file", "search_files"]);
    const warnings = by("odd").warnings!.join("\n");
    expect(warnings).toContain("WebFetch");
    expect(warnings).toContain('"Frobnicate"');

    const dir = tempDir("proj");
    fake.script(reply.tool("run_bash", { command: "touch escaped" }), reply.text("done"));
    // odd is only in the global dir: lookup finds it there.
    await session.client.callTool({
      name: "delegate_to_local_agent",
      arguments: { agent_name: "odd", task: "t", workdir: dir },
    });
    expect(offeredTools(0)).toEqual(["read_file", "search_files"]);
    expect(existsSync(join(dir, "escaped"))).toBe(false);
    expect(JSON.stringify(fake.requests[1]?.body)).toContain("run_bash is not available to agent 'odd'");
  });
});
