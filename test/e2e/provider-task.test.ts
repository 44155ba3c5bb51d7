import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { tempDir } from "../helpers/dl.ts";
import { connectTaskDl, type TaskDl } from "../helpers/task-session.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * delegate_to_provider made as an MCP task (2026-07-28, the ext-tasks requester) through
 * dist/dl serve: one background agent job whose child `dl run` talks to the named
 * endpoint. The attack: the api_key, which only that endpoint accepts, must never be in
 * the job store, the job folder, the child's argv, the agent's commands' environment,
 * the server's stderr or any answer; and a job whose server died before it ran says so.
 */
const PROVIDER_KEY = `sk-provider-${crypto.randomUUID()}`;
const MODEL = "provider-model";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { text: string }[] };
type JobView = { id: string; status: string; failure_kind: string | null; final_response: string | null };

let provider: FakeModel;
let root: string;
let agentsDir: string;
const open: TaskDl[] = [];

beforeAll(async () => {
  provider = await startFakeModel({ apiKey: PROVIDER_KEY });
  root = tempDir("provider-task");
  agentsDir = tempDir("provider-task-agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: helper\n---\nYou help.\n");
});
afterAll(async () => {
  await Promise.all(open.map((s) => s.close().catch(() => undefined)));
  await provider?.stop();
});

/** A server whose gateway is a closed port: a job that answers can only have used the provider. */
async function taskDl(stateDir: string, extra: Record<string, string> = {}): Promise<TaskDl> {
  const s = await connectTaskDl({
    DELEGATE_LOCAL_URL: "http://127.0.0.1:9/v1/messages",
    DELEGATE_LOCAL_KEY: "sk-gateway-not-this-one",
    DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
    DELEGATE_AGENT_STATE_DIR: stateDir,
    DELEGATE_PROVIDER_ALLOW_HOSTS: "127.0.0.1",
    DELEGATE_CACHE_DIR: join(stateDir, "..", `${stateDir.split("/").pop()}-cache`),
    DELEGATE_TASK_INLINE_S: "0",
    ...extra,
  });
  open.push(s);
  return s;
}

const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages ?? []).includes("tool_result");

/** Turn 1: a command that writes its environment, then waits for `release`; turn 2 answers. */
function scriptWaitForRelease(): void {
  provider.always((req) =>
    afterTool(req)
      ? reply.text("Released and done.")
      : reply.tool("run_bash", { command: "env > seen-env.txt; while [ ! -f release ]; do sleep 0.05; done" }),
  );
}

const providerArgs = (workdir: string) => ({
  provider_url: provider.anthropicUrl,
  api_key: PROVIDER_KEY,
  agent_name: "helper",
  task: "Do the work.",
  workdir,
  model: MODEL,
});

/** Every byte under `dir` (the SQLite file, its WAL, every job folder), as text. */
function everything(dir: string): string {
  if (!existsSync(dir)) return "";
  let out = "";
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile()) out += readFileSync(p, "latin1");
  }
  return out;
}

/** The argv of every process whose command line names `needle`, from /proc. */
function argvsNaming(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (argv.includes(needle)) found.push(argv);
    } catch {
      // gone
    }
  }
  return found;
}

describe("delegate_to_provider as a task (2026-07-28)", () => {
  test("runs as a background agent job against the provider; its key reaches no store, file, argv, log or answer", async () => {
    scriptWaitForRelease();
    const stateDir = join(root, "state-run");
    const s = await taskDl(stateDir);
    const repo = makeRepo(root, "run", 0).repo;
    const execution = await s.session.callTool("delegate_to_provider", providerArgs(repo));
    expect(execution.kind).toBe("task");
    const taskId = execution.handle!.taskId;
    expect(taskId).toMatch(/^delegate_to_provider:ag-[0-9a-f]+$/);
    const jobId = taskId.split(":")[1]!;

    // While the child runs: its argv, and what the agent's own command saw.
    const children = await until(() => {
      const a = argvsNaming(`jobs/${jobId}/task.md`);
      return a.length > 0 && existsSync(join(repo, "seen-env.txt")) ? a : undefined;
    }, "the job's child dl run and its first command");
    expect(children.join("\n")).toContain(" run helper ");
    expect(children.join("\n")).not.toContain(PROVIDER_KEY);
    const polled = await s.client.callTool({ name: "poll_agent", arguments: { ids: [jobId] } });
    expect(JSON.stringify(polled)).not.toContain(PROVIDER_KEY);
    writeFileSync(join(repo, "release"), "");

    const { outcome } = await (execution as unknown as { settle: () => Promise<{ outcome: never }> }).settle();
    const result = resultFromTaskOutcome(outcome) as ToolResult;
    // The delegation's own result, as the blocking call returns it.
    expect(result.structuredContent).toMatchObject({ success: true, last_bash_exit: 0, model_used: MODEL });
    expect(String(result.structuredContent!.final_response)).toContain("Released and done.");
    // Both turns went to the provider, with its key (the fake answers 401 to any other).
    expect(provider.requests.length).toBeGreaterThanOrEqual(2);
    expect(provider.requests.every((r) => JSON.stringify(r.headers).includes(PROVIDER_KEY))).toBe(true);

    expect(readFileSync(join(repo, "seen-env.txt"), "utf8")).not.toContain(PROVIDER_KEY);
    expect(everything(stateDir)).not.toContain(PROVIDER_KEY);
    expect(everything(`${stateDir}-cache`)).not.toContain(PROVIDER_KEY);
    expect(JSON.stringify(result)).not.toContain(PROVIDER_KEY);
    expect(JSON.stringify(execution)).not.toContain(PROVIDER_KEY);
    expect(s.io.stderr).not.toContain(PROVIDER_KEY);
  }, 90_000);

  test("an endpoint the SSRF guard refuses is refused at once, structured, and queues no job", async () => {
    const stateDir = join(root, "state-ssrf");
    const s = await taskDl(stateDir, { DELEGATE_PROVIDER_ALLOW_HOSTS: "" });
    const repo = makeRepo(root, "ssrf", 0).repo;
    const before = provider.requests.length;
    const execution = await s.session.callTool("delegate_to_provider", providerArgs(repo));
    expect(execution.kind).toBe("immediate");
    const { outcome } = await (execution as unknown as { settle: () => Promise<{ outcome: never }> }).settle();
    const answer = resultFromTaskOutcome(outcome) as ToolResult;
    expect(answer.isError).toBe(true);
    expect(answer.structuredContent).toMatchObject({ code: "bad_input", failure_kind: "bad_input" });
    expect(String(answer.structuredContent?.error)).toContain("127.0.0.1");
    expect(JSON.stringify(answer)).not.toContain(PROVIDER_KEY);
    expect(provider.requests.length).toBe(before);
    expect(existsSync(join(stateDir, "jobs")) ? readdirSync(join(stateDir, "jobs")) : []).toEqual([]);
  }, 60_000);

  test("a provider job whose server was SIGKILLed before it ran is settled by the next server as provider_key_lost", async () => {
    scriptWaitForRelease();
    const stateDir = join(root, "state-restart");
    const first = await taskDl(stateDir, { DELEGATE_AGENT_MAX_CONCURRENT: "1", DELEGATE_AGENT_MAX_PER_PROJECT: "1" });
    // The blocker talks to the provider too (the gateway is a closed port, where a job
    // fails at once and frees the slot): it holds the only slot until `release` exists.
    const busy = makeRepo(root, "busy", 0).repo;
    const blocker = await first.session.callTool("delegate_to_provider", providerArgs(busy));
    expect(blocker.kind).toBe("task");
    await until(() => existsSync(join(busy, "seen-env.txt")), "the blocker running its command", 30_000);
    const repo = makeRepo(root, "queued", 0).repo;
    const execution = await first.session.callTool("delegate_to_provider", providerArgs(repo));
    const jobId = execution.handle!.taskId.split(":")[1]!;
    const queued = await first.client.callTool({ name: "poll_agent", arguments: { ids: [jobId] } });
    expect((queued.structuredContent as { jobs: JobView[] }).jobs[0]!.status).toBe("queued");

    const reference = (execution as never as { serializeReference: () => never }).serializeReference();
    first.io.proc.kill("SIGKILL");
    await first.io.proc.exited;
    // The blocker runs on under its supervisor; once it ends, the slot is free for the
    // queued job, which a supervisor of its own took over from the dead server.
    writeFileSync(join(busy, "release"), "");
    const second = await taskDl(stateDir);
    const { outcome } = await (await second.session.resumeTask(reference)).settle();
    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as ToolResult;
    // A delegation that could not run reports it in its result, as the blocking call does.
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ success: false, stop_reason: "provider_key_lost", turns: 0 });
    expect(String(result.structuredContent!.error)).toContain("delegate_to_provider again");
    const polled = await second.client.callTool({ name: "poll_agent", arguments: { ids: [jobId] } });
    const [job] = (polled.structuredContent as { jobs: JobView[] }).jobs;
    // The key lived only in the dead server's memory: its supervisor could not start it.
    expect(job!.status).toBe("failed");
    expect(job!.failure_kind).toBe("provider_key_lost");
    expect(everything(stateDir)).not.toContain(PROVIDER_KEY);
  }, 90_000);
});
