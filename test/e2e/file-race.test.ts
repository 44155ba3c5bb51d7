import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type FakeModel, startFakeModel } from "../fixture/fake-model.ts";
import { connectWithHelperAgent, type DlSession, tempDir } from "../helpers/dl.ts";
import { lineReader } from "../helpers/lines.ts";

/**
 * Issue 10 item 11: read_file and write_file against a process that keeps swapping a
 * directory of the workdir for a symlink to a folder outside it. Through dist/dl serve
 * with run_bash off (where file confinement is all there is): no read returns the outside
 * file and no write lands outside, however the race falls.
 */
const SWAPPER = resolve(import.meta.dir, "..", "fixture", "symlink-swapper.ts");
const CALLS = 150;
const MAX_ROUNDS = 12;
let fake: FakeModel;
let session: DlSession;

beforeAll(async () => {
  fake = await startFakeModel();
  session = await connectWithHelperAgent(fake.url, {
    DELEGATE_LOCAL_MODEL: "local-test-model",
    DELEGATE_RUN_BASH: "0",
  });
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

describe("file tools against a racing symlink swap", () => {
  test("no read or write escapes the workdir", async () => {
    const root = realpathSync(tempDir("race"));
    const work = join(root, "work");
    const outside = join(root, "outside");
    mkdirSync(join(work, "d"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(work, "d", "file.txt"), "inside-content\n");
    writeFileSync(join(outside, "file.txt"), "SECRET-OUTSIDE\n");
    const stop = join(root, "stop");
    const swapper = Bun.spawn([process.execPath, SWAPPER, work, outside, stop, "2000000"], { stdout: "pipe" });
    const line = lineReader(swapper.stdout);
    expect(await line()).toBe("started");

    // How often a read lands between two swaps depends on the machine's timing, so the
    // model keeps asking (a batch per turn) until one read went through: a real race,
    // not refusals only. At most MAX_ROUNDS batches, then it stops and the test says so.
    let round = 0;
    fake.always((req) => {
      const readThrough = JSON.stringify(req.body.messages).includes("inside-content");
      if ((round >= 2 && readThrough) || round >= MAX_ROUNDS) return { text: "done" };
      const tools = [];
      for (let i = 0; i < CALLS; i++) {
        tools.push({ name: "read_file", input: { path: "d/file.txt" } });
        tools.push({ name: "write_file", input: { path: `d/w${round}-${i}.txt`, content: "PLANTED\n" } });
      }
      round++;
      return { tools };
    }, "glm-race");
    const res = await session.client.callTool(
      {
        name: "delegate_to_local_agent",
        arguments: { agent_name: "helper", task: "t", workdir: work, model: "glm-race" },
      },
      { timeout: 60_000 },
    );
    writeFileSync(stop, "");
    expect(await swapper.exited).toBe(0);
    expect(res.isError).toBeFalsy();

    const seen = fake.requests.slice(1).map((q) => JSON.stringify(q.body));
    expect(seen.length).toBe(round);
    const leaked = seen.filter((body) => body.includes("SECRET-OUTSIDE")).length;
    expect(leaked).toBe(0);
    // The race was real work, not refusals only: some reads went through.
    expect(seen.join("").split("inside-content").length - 1).toBeGreaterThan(0);
    expect(readdirSync(outside)).toEqual(["file.txt"]);
  }, 90_000);

  test("no search, list or edit escapes the workdir either", async () => {
    const root = realpathSync(tempDir("race-walk"));
    const work = join(root, "work");
    const outside = join(root, "outside");
    mkdirSync(join(work, "d"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(work, "d", "file.txt"), "inside-content\n");
    writeFileSync(join(work, "d", "e.txt"), "A\n");
    writeFileSync(join(outside, "file.txt"), "SECRET-OUTSIDE\n");
    writeFileSync(join(outside, "e.txt"), "A\n");
    writeFileSync(join(outside, "outside-only.txt"), "x\n");
    const stop = join(root, "stop");
    const swapper = Bun.spawn([process.execPath, SWAPPER, work, outside, stop, "2000000"], { stdout: "pipe" });
    const line = lineReader(swapper.stdout);
    expect(await line()).toBe("started");

    const tools = [];
    for (let i = 0; i < CALLS * 2; i++) {
      tools.push({ name: "search_files", input: { pattern: "S.CRET|inside" } });
      tools.push({ name: "list_files", input: {} });
      tools.push({
        name: "edit_file",
        input: { path: "d/e.txt", old_string: i % 2 ? "B" : "A", new_string: i % 2 ? "A" : "B" },
      });
    }
    fake.script("glm-race", { tools }, { text: "done" });
    const res = await session.client.callTool(
      {
        name: "delegate_to_local_agent",
        arguments: { agent_name: "helper", task: "t", workdir: work, model: "glm-race" },
      },
      { timeout: 60_000 },
    );
    writeFileSync(stop, "");
    expect(await swapper.exited).toBe(0);
    expect(res.isError).toBeFalsy();
    const seen = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(seen.includes("SECRET-OUTSIDE")).toBe(false);
    expect(seen.includes("outside-only")).toBe(false);
    expect(seen.split("inside-content").length - 1).toBeGreaterThan(0);
    expect(readFileSync(join(outside, "e.txt"), "utf8")).toBe("A\n");
    expect(readdirSync(outside).sort()).toEqual(["e.txt", "file.txt", "outside-only.txt"]);
  }, 90_000);
});
