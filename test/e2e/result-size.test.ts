import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { connectWithHelperAgent, type DlSession, tempDir } from "../helpers/dl.ts";

/**
 * Issue 10 item 8: a huge model answer must not make a huge MCP reply. Through dist/dl
 * serve: the structured answer is capped and says so, the whole answer is kept in a
 * private file it names, and the text part is a short rendering, not a second copy.
 */
let fake: FakeModel;
let session: DlSession;
/** The folder the first test's answer was kept in. */
let resultsDir = "";
const BIG = 10 * 1024 * 1024;

type Bounded = {
  success: boolean;
  final_response: string;
  truncated?: boolean;
  final_response_length?: number;
  final_response_path?: string;
};

beforeAll(async () => {
  fake = await startFakeModel();
  session = await connectWithHelperAgent(fake.url, {
    DELEGATE_LOCAL_MODEL: "local-test-model",
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

function bigAnswer(tag: string): string {
  return `${tag}:${"0123456789abcdef".repeat(BIG / 16)}:end-${tag}`;
}

describe("bounded tool results through dist/dl serve", () => {
  test("a 10 MB answer comes back capped, marked, with its full text in a private file", async () => {
    const answer = bigAnswer("single");
    fake.script("glm-big", reply.text(answer, { chunkSize: 1024 * 1024 }));
    const res = await session.client.callTool(
      {
        name: "delegate_to_local_agent",
        arguments: { agent_name: "helper", task: "t", workdir: tempDir("w"), model: "glm-big" },
      },
      { timeout: 60_000 },
    );
    expect(res.isError).toBeFalsy();
    const r = res.structuredContent as Bounded;
    expect(r.success).toBe(true);
    expect(r.truncated).toBe(true);
    expect(r.final_response_length).toBe(answer.length);
    expect(r.final_response).toBe(answer.slice(0, 100_000));
    const file = r.final_response_path!;
    resultsDir = dirname(file);
    expect(readFileSync(file, "utf8")).toBe(answer);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    const text = (res.content as { text: string }[])[0]!.text;
    expect(text.length).toBeLessThan(16_500);
    expect(text).toContain(`of ${answer.length} characters shown here`);
    expect(text).toContain(file);
    expect(JSON.stringify(res).length).toBeLessThan(200_000);
  }, 60_000);

  test("delegate_batch: every task's answer is capped, the reply stays small, week-old kept answers are pruned", async () => {
    // The first test finds the results folder; without it these files would land in the cwd.
    if (!resultsDir) throw new Error("the results folder is unknown: the test before this one failed");
    const stale = join(resultsDir, "answer-stale.md");
    const recent = join(resultsDir, "answer-recent.md");
    writeFileSync(stale, "old");
    writeFileSync(recent, "new");
    const eightDaysAgo = (Date.now() - 8 * 24 * 3600 * 1000) / 1000;
    utimesSync(stale, eightDaysAgo, eightDaysAgo);
    fake.script("glm-big-a", reply.text(bigAnswer("a"), { chunkSize: 1024 * 1024 }));
    fake.script("glm-small-b", reply.text("short answer"));
    const res = await session.client.callTool(
      {
        name: "delegate_batch",
        arguments: {
          tasks: [
            { agent_name: "helper", task: "a", workdir: tempDir("w"), model: "glm-big-a" },
            { agent_name: "helper", task: "b", workdir: tempDir("w"), model: "glm-small-b" },
          ],
        },
      },
      { timeout: 60_000 },
    );
    const [a, b] = (res.structuredContent as { results: Bounded[] }).results;
    expect(a!.truncated).toBe(true);
    expect(readFileSync(a!.final_response_path!, "utf8")).toEndWith(":end-a");
    expect(b!.final_response).toBe("short answer");
    expect(b!.truncated).toBeUndefined();
    expect(JSON.stringify(res).length).toBeLessThan(200_000);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  }, 60_000);
});
