import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, type RecordedRequest, reply, startFakeModel } from "../fixture/fake-model.ts";
import { callTool, connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";

/**
 * Issue 24 item 4 through the compiled binary: a finished delegation continued with
 * `continue_from` (dist/dl serve and dist/dl run), its earlier messages resent byte for
 * byte, and every refusal: another agent, model or workdir, a conversation still
 * running, an id that is not one. `dl reap` removes old conversations.
 */
let fake: FakeModel;
let session: DlSession;
const agentsDir = () => join(process.env.DL_TEST_ROOT!, "follow-up-agents");
const stateDir = () => join(process.env.DL_TEST_ROOT!, "follow-up-state");
const env = () => ({
  DELEGATE_LOCAL_URL: fake.anthropicUrl,
  DELEGATE_LOCAL_AGENTS_DIR: agentsDir(),
  DELEGATE_AGENT_STATE_DIR: stateDir(),
  DELEGATE_LOCAL_MODEL: "glm-follow",
});

beforeAll(async () => {
  fake = await startFakeModel();
  mkdirSync(agentsDir(), { recursive: true });
  writeFileSync(join(agentsDir(), "helper.md"), "---\nname: helper\n---\nHelp.\n");
  writeFileSync(join(agentsDir(), "other.md"), "---\nname: other\n---\nSomeone else.\n");
  session = await connectDl(env());
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});
beforeEach(() => fake.reset());

type Result = { success: boolean; conversation_id?: string; final_response: string; turns: number };

/** A request's parts as a prefix cache sees them: without the cache_control breakpoints. */
const plain = (r: RecordedRequest) =>
  JSON.parse(JSON.stringify(r.body, (k, v) => (k === "cache_control" ? undefined : v))) as {
    system: unknown;
    tools: unknown;
    messages: { role: string; content: unknown }[];
  };

/** A finished 3-turn delegation in a fresh workdir; returns its id, workdir and last request. */
async function firstRun(): Promise<{ id: string; dir: string; last: RecordedRequest }> {
  const dir = tempDir("conv");
  writeFileSync(join(dir, "a.txt"), "alpha\n");
  fake.script(
    reply.tool("read_file", { path: "a.txt" }),
    reply.tool("search_files", { pattern: "alp" }),
    reply.text("read a.txt: it says alpha"),
  );
  const r = await callTool<Result>(session, "delegate_to_local_agent", {
    agent_name: "helper",
    task: "read a.txt",
    workdir: dir,
  });
  expect(r.isError).toBeFalsy();
  expect(r.data.success).toBe(true);
  expect(r.data.conversation_id).toMatch(/^cv-[0-9a-f]{20}$/);
  expect(r.text).toContain(`conversation: ${r.data.conversation_id}`);
  return { id: r.data.conversation_id!, dir, last: fake.requests.at(-1)! };
}

describe("follow-ups through dist/dl serve", () => {
  test("a follow-up resends the earlier messages byte for byte, then the final reply and the new task", async () => {
    const { id, dir, last } = await firstRun();
    const file = join(stateDir(), "conversations", `${id}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir(), "conversations")).mode & 0o777).toBe(0o700);
    fake.reset();
    fake.script(reply.tool("read_file", { path: "a.txt" }), reply.text("still alpha"));
    const r = await callTool<Result>(session, "delegate_to_local_agent", {
      agent_name: "helper",
      task: "also check it again",
      continue_from: id,
    });
    expect(r.isError).toBeFalsy();
    expect(r.data.success).toBe(true);
    expect(r.data.conversation_id).toBe(id);
    const before = plain(last);
    const after = plain(fake.requests[0]!);
    expect(after.system).toEqual(before.system);
    expect(after.tools).toEqual(before.tools);
    const n = before.messages.length;
    expect(after.messages.slice(0, n)).toEqual(before.messages);
    for (let i = 0; i < n; i++) expect(JSON.stringify(after.messages[i])).toBe(JSON.stringify(before.messages[i]));
    expect(after.messages[n]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "read a.txt: it says alpha" }],
    });
    expect(after.messages[n + 1]).toEqual({ role: "user", content: [{ type: "text", text: "also check it again" }] });
    expect(after.messages).toHaveLength(n + 2);
    // The follow-up ran in the conversation's own workdir (its tool read the file there).
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain("alpha");
    expect(JSON.stringify(fake.requests[1]!.body.system)).toContain(dir);
  });

  test("another agent, model or workdir is refused, naming what differs", async () => {
    const { id, dir } = await firstRun();
    const other = tempDir("elsewhere");
    const cases: [Record<string, unknown>, string[]][] = [
      [{ agent_name: "other" }, ['agent ("other"', '"helper"']],
      [{ agent_name: "helper", model: "glm-other" }, ['model ("glm-other"', '"glm-follow"']],
      [{ agent_name: "helper", workdir: other }, ["workdir (", JSON.stringify(dir)]],
    ];
    for (const [args, words] of cases) {
      const r = await callTool(session, "delegate_to_local_agent", { task: "more", continue_from: id, ...args });
      expect(r.isError).toBe(true);
      for (const w of words) expect(r.text).toContain(w);
      expect(r.text).toContain("same agent, model and workdir");
    }
    expect(fake.requests.length).toBe(3); // only the first run reached the model
  });

  test("a follow-up of a conversation another call is still running is refused", async () => {
    const { id } = await firstRun();
    fake.reset();
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    fake.script(async () => {
      await gate;
      return reply.text("slow follow-up done");
    });
    const running = callTool<Result>(session, "delegate_to_local_agent", {
      agent_name: "helper",
      task: "one",
      continue_from: id,
    });
    await fake.waitFor(() => fake.inFlight() === 1, 30_000);
    const second = await callTool(session, "delegate_to_local_agent", {
      agent_name: "helper",
      task: "two",
      continue_from: id,
    });
    expect(second.isError).toBe(true);
    expect(second.text).toContain(`conversation ${id} is still running in another call`);
    open();
    const first = await running;
    expect(first.data.success).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  test("continue_from that is not a conversation id is refused by the input schema", async () => {
    const r = await callTool(session, "delegate_to_local_agent", {
      agent_name: "helper",
      task: "x",
      continue_from: "../../etc/passwd",
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("continue_from must be a conversation_id");
  });
});

describe("follow-ups as background agent jobs (submit_agent)", () => {
  test("submit_agent with continue_from runs the follow-up in a child dl run; poll_agent shows the conversation_id", async () => {
    const { id, dir } = await firstRun();
    fake.reset();
    fake.script(reply.text("background follow-up done"));
    const sub = await callTool<{ jobs: { id: string }[] }>(session, "submit_agent", {
      tasks: [{ agent_name: "helper", task: "one more, in the background", workdir: dir, continue_from: id }],
    });
    expect(sub.isError).toBeFalsy();
    const job = sub.data.jobs[0]!.id;
    type View = { status: string; conversation_id: string | null; final_response: string | null };
    const done = await until(
      async () => {
        const v = (await callTool<{ jobs: View[] }>(session, "poll_agent", { ids: [job] })).data.jobs[0]!;
        return ["queued", "running"].includes(v.status) ? null : v;
      },
      `agent job ${job} to end`,
      60_000,
    );
    expect(done.status).toBe("done");
    expect(done.conversation_id).toBe(id);
    expect(done.final_response).toBe("background follow-up done");
    expect(JSON.stringify(fake.requests[0]!.body.messages)).toContain("read a.txt: it says alpha");
  });
});

describe("follow-ups through dist/dl run, and dl reap", () => {
  test("dl run --continue-from continues; a malformed or unknown id is refused before any model call", async () => {
    const { id } = await firstRun();
    fake.reset();
    fake.script(reply.text("cli follow-up done"));
    const ok = await runDl(["run", "helper", "one more thing", "--continue-from", id, "--json"], env());
    expect(ok.code).toBe(0);
    const res = JSON.parse(ok.stdout) as Result;
    expect(res.conversation_id).toBe(id);
    expect(res.final_response).toBe("cli follow-up done");
    const msgs = fake.requests[0]!.body.messages as unknown[];
    expect(JSON.stringify(msgs.at(-1))).toContain("one more thing");
    expect(JSON.stringify(msgs)).toContain("read a.txt: it says alpha");

    fake.reset();
    const bad = await runDl(["run", "helper", "x", "--continue-from", "../../../tmp/evil"], env());
    expect(bad.code).not.toBe(0);
    expect(bad.stderr + bad.stdout).toContain("is not a conversation id");
    const gone = await runDl(["run", "helper", "x", "--continue-from", "cv-00000000000000000000"], env());
    expect(gone.code).not.toBe(0);
    expect(gone.stderr + gone.stdout).toContain("no conversation cv-00000000000000000000");
    expect(fake.requests).toHaveLength(0);
  });

  test("dl reap removes conversations older than the job retention, and keeps newer ones", async () => {
    const old = await firstRun();
    const fresh = await firstRun();
    const file = (id: string) => join(stateDir(), "conversations", `${id}.json`);
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    utimesSync(file(old.id), twoDaysAgo, twoDaysAgo);
    const r = await runDl(["reap", "--json"], { ...env(), DELEGATE_JOB_RETENTION_DAYS: "1" });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { pruned_conversations: number }).pruned_conversations).toBeGreaterThanOrEqual(1);
    expect(existsSync(file(old.id))).toBe(false);
    expect(existsSync(file(fresh.id))).toBe(true);
  });
});
