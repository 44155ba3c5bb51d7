import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lookupAgent } from "../../src/agent/lookup.ts";
import { runAgent } from "../../src/agent/loop.ts";
import { complete } from "../../src/backends/client.ts";
import { endpointFor } from "../../src/backends/route.ts";
import { defaultAgentSettings } from "../../src/dispatch/agent-settings.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { tempDir } from "../helpers/dl.ts";

const FIXTURE_AGENTS = join(import.meta.dir, "..", "fixture", "agents");
const KEY = "sk-test-e2e-key";
let fake: FakeModel;

beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
});
afterAll(async () => {
  await fake.stop();
});

/** Both wire formats through the real client: read, write, a failing command, the true exit code. */
describe.each([
  ["anthropic", "glm-5"],
  ["openai", "deepseek-v4-flash"],
] as const)("end to end over %s", (format, model) => {
  test("reads a file, writes a file, runs a failing command; the result has the true exit code", async () => {
    fake.reset();
    const workdir = realpathSync(tempDir(`e2e-${format}`));
    writeFileSync(join(workdir, "input.txt"), "forty-two\n");
    fake.script(
      model,
      reply.thinking("first look at the input", reply.tool("read_file", { path: "input.txt" })),
      reply.thinking(
        "now write",
        reply.tool("write_file", { path: "out/answer.txt", content: "answer: forty-two\n" }, { chunkSize: 3 }),
      ),
      reply.tool("run_bash", { command: "cat out/answer.txt; echo boom >&2; exit 7" }),
      reply.text("Wrote out/answer.txt. The check command failed with exit 7.", { model: `${model}-served` }),
    );
    const agent = await lookupAgent("coder", { workdir, agentsDir: FIXTURE_AGENTS });
    const settings = defaultAgentSettings({
      defaultModel: "unused",
      baseEnv: { PATH: process.env.PATH, SECRET_API_KEY: KEY },
    });
    const r = await runAgent({
      agent,
      task: "Copy the answer from input.txt into out/answer.txt and run the check.",
      workdir,
      model,
      complete: (req) => complete(req),
      endpoint: (m) => endpointFor({ baseUrl: fake.url, apiKey: KEY, model: m }),
      settings,
    });
    expect(r.error).toBeUndefined();
    expect(r.success).toBe(true);
    expect(r.turns).toBe(4);
    expect(r.bash_calls).toBe(1);
    expect(r.bash_failures).toBe(1);
    expect(r.last_bash_exit).toBe(7);
    expect(r.model_used).toBe(`${model}-served`);
    expect(r.agent_source).toBe("global");
    expect(readFileSync(join(workdir, "out/answer.txt"), "utf8")).toBe("answer: forty-two\n");
    expect(fake.requests.every((q) => q.format === format)).toBe(true);
    // What the model saw after the command: the exit code and both streams.
    const last = JSON.stringify(fake.requests[3]!.body);
    expect(last).toContain("exit code: 7");
    expect(last).toContain("boom");
    expect(last).toContain("     1\\tforty-two");
    // No key in anything sent to the model (the env allowlist kept it from the command).
    expect(JSON.stringify(fake.requests.map((q) => q.body))).not.toContain(KEY);
    // deepseek-* got its reasoning back (the fake answers 400 otherwise, so success proves it too).
    if (format === "openai") expect(last).toContain("reasoning_content");
  });
});
