import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { allProvidersEnv } from "../helpers/all-providers.ts";
import { markerRouter } from "../helpers/codex-home.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { makeRepo } from "../jobs/helpers.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * A call made as an MCP task completes with exactly what the blocking call returns: for
 * every tool that runs as a task, the same call is made blocking in both protocol eras
 * (the SDK's Client checks the structured result against the tool's outputSchema) and as
 * a task (2026-07-28, ext-tasks requester); the task's result must pass the same
 * validator (the Client's own, Ajv) against the outputSchema each era lists, carry the
 * same fields and the same isError. Real parts: dist/dl serve, the real Codex CLI against
 * a fake Responses API, the fake agy in the real jail, the fake dsh launcher, agent jobs
 * against a scripted fake model.
 */
const KEY = "sk-task-results";
const MODEL = "local-results-model";

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] };
type Tool = { name: string; outputSchema?: Record<string, unknown> };

let fake: FakeModel;
let codexFake: FakeResponses;
let root: string;
let env: Record<string, string>;
let legacy: Client;
let modern: TaskDl;
const schemas: Record<"legacy" | "modern", Map<string, Record<string, unknown>>> = {
  legacy: new Map(),
  modern: new Map(),
};
const validator = new AjvJsonSchemaValidator();

const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages ?? []).includes("tool_result");

beforeAll(async () => {
  requireBinary();
  fake = await startFakeModel({ apiKey: KEY });
  fake.always((req) =>
    afterTool(req)
      ? reply.text("Checked: it exited 3.", { delayMs: 20 })
      : reply.tool("run_bash", { command: "echo checking; exit 3" }, { delayMs: 20 }),
  );
  codexFake = startFakeResponses(markerRouter());
  root = tempDir("task-results");
  const agentsDir = tempDir("task-results-agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nYou help.\n");
  env = {
    ...allProvidersEnv({ root, modelUrl: fake.anthropicUrl, key: KEY, agentsDir, codexBaseUrl: codexFake.baseUrl }),
    DELEGATE_PROVIDER_ALLOW_HOSTS: "127.0.0.1",
    // Every call becomes a task, however quickly it ends: what is compared is the result.
    DELEGATE_TASK_INLINE_S: "0",
  };
  legacy = new Client({ name: "results-legacy", version: "1" }, { versionNegotiation: { mode: "legacy" } });
  await legacy.connect(new StdioClientTransport({ command: requireBinary(), args: ["serve"], env: testEnv(env) }));
  modern = await connectTaskDl(env);
  for (const t of (await legacy.listTools()).tools as Tool[]) schemas.legacy.set(t.name, t.outputSchema!);
  for (const t of (await modern.client.listTools()).tools as Tool[]) schemas.modern.set(t.name, t.outputSchema!);
}, 60_000);
afterAll(async () => {
  await legacy?.close().catch(() => undefined);
  await modern?.close().catch(() => undefined);
  await fake?.stop();
  await codexFake?.stop();
});

/** The call blocking, in both eras: the SDK Client refuses a structured result its outputSchema does not allow. */
async function blocking(name: string, args: Record<string, unknown>): Promise<Result[]> {
  const opts = { timeout: 120_000 };
  return [
    (await legacy.callTool({ name, arguments: args }, opts)) as Result,
    (await modern.client.callTool({ name, arguments: args }, opts)) as Result,
  ];
}

/** The same call as a task, settled. */
async function asTask(name: string, args: Record<string, unknown>): Promise<{ taskId: string; result: Result }> {
  const execution = await modern.session.callTool(name, args as never);
  expect(execution.kind).toBe("task");
  const { outcome } = await (execution as never as { settle: () => Promise<{ outcome: { status: string } }> }).settle();
  expect(outcome.status).toBe("completed");
  return { taskId: execution.handle!.taskId, result: resultFromTaskOutcome(outcome as never) as Result };
}

/** The task's structured result against the tool's outputSchema as each era lists it, by the Client's validator. */
function expectValid(name: string, r: Result): void {
  expect(r.structuredContent).toBeDefined();
  for (const era of ["legacy", "modern"] as const) {
    const check = validator.getValidator(schemas[era].get(name)! as never)(r.structuredContent);
    expect({ era, tool: name, valid: check.valid, why: check.errorMessage }).toEqual({
      era,
      tool: name,
      valid: true,
      why: undefined,
    });
  }
}

/** Fields that differ run to run (ids, times, paths named after them); everything else must match. */
const VOLATILE = new Set([
  "elapsed_s",
  "id",
  "logs",
  "conversation_id",
  "duration_s",
  "queued_s",
  "last_activity_age_s",
  "owner",
  "session_id",
]);

function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .filter(([k]) => !VOLATILE.has(k))
      .map(([k, x]) => [k, stable(x)]),
  );
}

/** The task answered what the blocking calls answered: same isError, same fields, same values but the volatile ones. */
async function expectSameAsBlocking(name: string, args: () => Record<string, unknown>): Promise<Result> {
  const [old, now] = await blocking(name, args());
  const { result } = await asTask(name, args());
  expectValid(name, result);
  expect(Boolean(result.isError)).toBe(Boolean(old!.isError));
  expect(Boolean(result.isError)).toBe(Boolean(now!.isError));
  expect(Object.keys(result.structuredContent!).sort()).toEqual(Object.keys(old!.structuredContent!).sort());
  expect(stable(result.structuredContent)).toEqual(stable(now!.structuredContent));
  return result;
}

const agentArgs = (workdir: string) => ({ agent_name: "helper", task: "Run the check.", workdir, model: MODEL });

describe("a task's result is the tool's own result", () => {
  test("delegate_to_local_agent: the delegation result, not the poll view", async () => {
    const repo = makeRepo(root, "local", 0).repo;
    const r = await expectSameAsBlocking("delegate_to_local_agent", () => agentArgs(repo));
    expect(r.structuredContent).toMatchObject({ success: true, last_bash_exit: 3, bash_calls: 1, model_used: MODEL });
    expect(String(r.structuredContent!.final_response)).toContain("exited 3");
    expect(r.structuredContent!.jobs).toBeUndefined();
  }, 60_000);

  test("delegate_to_provider: the delegation result, against the endpoint it named", async () => {
    const repo = makeRepo(root, "provider", 0).repo;
    const args = () => ({ ...agentArgs(repo), provider_url: fake.anthropicUrl, api_key: KEY, format: "anthropic" });
    const r = await expectSameAsBlocking("delegate_to_provider", args);
    expect(r.structuredContent).toMatchObject({ success: true, last_bash_exit: 3 });
  }, 60_000);

  test("delegate_batch: every task's result in order, with the counts", async () => {
    const repos = [0, 1].map((i) => makeRepo(root, `batch-${i}`, 0).repo);
    const r = await expectSameAsBlocking("delegate_batch", () => ({ tasks: repos.map(agentArgs) }));
    expect(r.structuredContent).toMatchObject({ succeeded: 2, failed: 0 });
    expect((r.structuredContent!.results as unknown[]).length).toBe(2);
  }, 60_000);

  test("a delegation that fails (the backend refuses the key) fails alike, isError as the blocking call sets it", async () => {
    const repo = makeRepo(root, "refused", 0).repo;
    const args = () => ({
      ...agentArgs(repo),
      provider_url: fake.anthropicUrl,
      api_key: "wrong-key",
      format: "anthropic",
    });
    const r = await expectSameAsBlocking("delegate_to_provider", args);
    expect(r.structuredContent).toMatchObject({ success: false });
    expect(String(r.structuredContent!.error)).toContain("401");
  }, 60_000);

  test("delegate_to_codex: the ended job's view, as the blocking call returns it", async () => {
    const repo = makeRepo(root, "codex", 0).repo;
    const r = await expectSameAsBlocking("delegate_to_codex", () => ({ task: "say done", workdir: repo }));
    expect(r.structuredContent).toMatchObject({ status: "done", provider: "codex" });
    expect(r.structuredContent!.jobs).toBeUndefined();
  }, 120_000);

  test.skipIf(skipBwrap)(
    "delegate_to_gemini: the reference's fields",
    async () => {
      const repo = makeRepo(root, "gemini", 0).repo;
      const r = await expectSameAsBlocking("delegate_to_gemini", () => ({ task: "hello there", workdir: repo }));
      expect(r.structuredContent).toMatchObject({ status: "done", response: "done: hello there" });
    },
    120_000,
  );

  test("submit_* as a task: the jobs as poll_* shows them once ended, valid against submit's own schema", async () => {
    const tasks: [string, Record<string, unknown>][] = [
      ["submit_agent", agentArgs(makeRepo(root, "sub-agent", 0).repo)],
      ["submit_codex", { task: "say done", workdir: makeRepo(root, "sub-codex", 0).repo }],
      ["submit_dsh", { task: "MODE: ok\nDo it.", model: "ds-flash", workdir: makeRepo(root, "sub-dsh", 0).repo }],
    ];
    if (!skipBwrap) tasks.push(["submit_gemini", { task: "hi", workdir: makeRepo(root, "sub-gemini", 0).repo }]);
    // One provider each, in repos of their own: the tasks run side by side.
    await Promise.all(
      tasks.map(async ([name, task]) => {
        const { taskId, result } = await asTask(name, { tasks: [task] });
        expectValid(name, result);
        expect(result.isError).toBeFalsy();
        const jobs = result.structuredContent!.jobs as { id: string; status: string }[];
        expect(jobs.map((j) => [j.id, j.status])).toEqual([[taskId, "done"]]);
      }),
    );
  }, 180_000);
});
