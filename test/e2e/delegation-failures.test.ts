import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";

/**
 * A delegation that fails after it started carries `failure_kind` and `code` like every
 * refused call and every failed job (docs/TROUBLESHOOTING.md lists the kinds): a backend
 * that refuses the key, a full pool inside a batch, a turn budget spent, and the same
 * through `dl run --json`.
 */
type Result = { success: boolean; failure_kind?: string; code?: string; error?: string };
let fake: FakeModel;
let agentsDir: string;
let workdir: string;
beforeAll(async () => {
  fake = await startFakeModel();
  agentsDir = tempDir("agents");
  workdir = tempDir("work");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\n---\nHelp.\n");
});
afterAll(() => fake?.stop());

const env = (extra: Record<string, string> = {}) => ({
  DELEGATE_LOCAL_URL: fake.anthropicUrl,
  DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
  ...extra,
});

describe("failure_kind on a delegation that failed after it started", () => {
  let s: DlSession;
  afterAll(async () => s?.close());

  test("a backend that answers 401: auth, code backend", async () => {
    s = await connectDl(env({ DELEGATE_CONCURRENCY_LOCAL_: "1", DELEGATE_QUEUE_GRACE: "0.2" }));
    fake.reset();
    fake.always(reply.status(401));
    const r = await callTool<Result>(s, "delegate_to_local_agent", { agent_name: "helper", task: "go", workdir });
    expect(r.data).toMatchObject({ success: false, failure_kind: "auth", code: "backend" });
    expect(r.data.error).toContain("HTTP 401");
  });

  test("a turn budget spent: turn_limit; a success has no failure_kind", async () => {
    fake.reset();
    fake.always(reply.tool("list_files", { path: "." }));
    const r = await callTool<Result>(s, "delegate_to_local_agent", {
      agent_name: "helper",
      task: "go",
      workdir,
      max_turns: 1,
    });
    expect(r.data).toMatchObject({ success: false, failure_kind: "turn_limit", code: "incomplete" });
    fake.reset();
    fake.always(reply.text("fine"));
    const ok = await callTool<Result>(s, "delegate_to_local_agent", { agent_name: "helper", task: "go", workdir });
    expect(ok.data.success).toBe(true);
    expect(ok.data.failure_kind).toBeUndefined();
  });

  test("a busy pool inside a batch: that task says busy, the other succeeds", async () => {
    fake.reset();
    fake.always(reply.text("done", { delayMs: 1500 }));
    const task = { agent_name: "helper", task: "go", workdir, model: "local-private" };
    const r = await callTool<{ results: Result[] }>(s, "delegate_batch", { tasks: [task, task] });
    const kinds = r.data.results.map((x) => (x.success ? "ok" : `${x.failure_kind}/${x.code}`)).sort();
    expect(kinds).toEqual(["busy/busy", "ok"]);
  });

  test("dl run --json carries it too", async () => {
    fake.reset();
    fake.always(reply.status(429, { body: '{"error":"slow down"}' }));
    const r = await runDl(["run", "helper", "go", "--workdir", workdir, "--json"], {
      ...env(),
      DELEGATE_HTTP_TIMEOUT: "5",
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ success: false, failure_kind: "rate_limited", code: "backend" });
  }, 60_000);
});
