import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { runDl, tempDir } from "../helpers/dl.ts";

/**
 * Through dist/dl run: between two prunes every request only appends to the previous
 * one (what a prefix cache needs), and a prune stubs a batch of old results at once.
 */
let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.stop());

const TURNS = 12;

test("requests only append until the context budget is passed; then one batch of old results is stubbed", async () => {
  const dir = tempDir("prefix");
  mkdirSync(join(dir, ".claude", "agents"), { recursive: true });
  writeFileSync(join(dir, ".claude", "agents", "reader.md"), "---\nname: reader\n---\nRead what you are asked to.\n");
  for (let i = 0; i < TURNS; i++) writeFileSync(join(dir, `f${i}.txt`), `${`file ${i} `.repeat(100)}\n`);
  for (let i = 0; i < TURNS; i++) fake.script(reply.tool("read_file", { path: `f${i}.txt` }));
  fake.script(reply.text("read them all"));

  const env = {
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_CONTEXT_BUDGET: "4000",
    DELEGATE_KEEP_TOOL_RESULTS: "1",
  };
  const r = await runDl(["run", "reader", "read the files", "--workdir", dir, "--max-turns", "20", "--json"], env);
  expect(r.code).toBe(0);
  expect(fake.requests).toHaveLength(TURNS + 1);

  const messages = fake.requests.map((q) => (q.body.messages as unknown[]).map((m) => JSON.stringify(m)));
  let breaks = 0;
  for (let i = 1; i < messages.length; i++) {
    const prev = messages[i - 1]!;
    // The last message of the previous request carried the cache breakpoint; compare the ones before it.
    const changed = prev.slice(0, -1).some((m, k) => m !== messages[i]![k]);
    if (changed) breaks++;
  }
  // ~1 KB per result, budget 4 000 chars: a prune every ~3-4 turns, not one per turn.
  expect(breaks).toBeGreaterThan(0);
  expect(breaks).toBeLessThanOrEqual(4);
  const last = JSON.stringify(fake.requests.at(-1)!.body.messages);
  expect(last.match(/earlier read_file result removed/g)!.length).toBeGreaterThanOrEqual(8);
  expect(last).toContain(`file ${TURNS - 1} `);
});
