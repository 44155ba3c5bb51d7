import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { codexServeEnv, markerRouter } from "../helpers/codex-home.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { killPid, pidAlive } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * A job store that cannot be written at the moment a Codex job ends (here another
 * process holds its write lock past dl's busy timeout; a full disk fails the same
 * writes). The end must not be lost: dl keeps it in the job's dir, and once the store
 * can be written again `dl reap` records the real end instead of calling the job lost.
 * The servers wait 0.2 s for the lock (DELEGATE_STORE_BUSY_TIMEOUT) instead of 5 s: the
 * same failures, retries and fallbacks, in seconds.
 */
const QUICK_BUSY = { DELEGATE_STORE_BUSY_TIMEOUT: "0.2" };
let fake: FakeResponses;
let root: string;
let stateDir: string;
let session: DlSession | undefined;

beforeAll(() => {
  fake = startFakeResponses(markerRouter());
  root = tempDir("store-outage");
  stateDir = join(root, "codex-jobs");
});
afterAll(async () => {
  await session?.close().catch(() => {});
  await fake?.stop();
});

function outcomeStatus(id: string): string | null {
  try {
    const text = readFileSync(join(stateDir, "jobs", id, "outcome.json"), "utf8").trim();
    return text ? (JSON.parse(text) as { patch: { status: string } }).patch.status : null;
  } catch {
    return null;
  }
}

describe("a job that ends while its store cannot be written", () => {
  test("its end is kept; after its supervisor dies and the store is writable again, dl reap records it done", async () => {
    session = await connectDl({
      ...codexServeEnv(root, fake.baseUrl, stateDir),
      DELEGATE_CODEX_STAGGER_S: "0",
      ...QUICK_BUSY,
    });
    const repo = makeRepo(root, "outage", 0).repo;
    const sub = (await session.client.callTool({
      name: "submit_codex",
      arguments: { tasks: [{ task: "[slow:1500:outage] finish while the store is locked", workdir: repo }] },
    })) as { structuredContent?: { jobs: { id: string }[] } };
    const id = sub.structuredContent!.jobs[0]!.id;
    const store = JobStore.open(stateDir);
    await until(() => store.get(id)?.child_start, "the Codex child to be recorded", 60_000);

    // Another process takes the write lock and keeps it: every write of dl's fails now.
    const blocker = new Database(join(stateDir, "jobs.sqlite"));
    blocker.exec("PRAGMA busy_timeout = 10000"); // the server may be writing right now
    blocker.exec("BEGIN IMMEDIATE");
    await until(() => outcomeStatus(id) === "done", "the job's end to be kept in its dir", 60_000);
    // The job's supervisor is what writes its row: the end dies with it, but for the job's dir.
    const supervisor = store.get(id)!.owner_pid!;
    expect(supervisor).not.toBe(session.transport.pid);
    // Its server too: a live one would record the kept end itself (the next test shows that).
    for (const pid of [supervisor, session.transport.pid!]) {
      killPid(pid, "SIGKILL");
      await until(() => !pidAlive(pid), `process ${pid} to die`);
    }
    blocker.exec("ROLLBACK");
    blocker.close();
    expect(store.get(id)?.status).toBe("running"); // the store never heard of the end

    const reap = await runDl(["reap", "--json"], { DELEGATE_CODEX_STATE_DIR: stateDir });
    expect(reap.code).toBe(0);
    const codex = (
      JSON.parse(reap.stdout) as { providers: { provider: string; reaped: { id: string; status: string }[] }[] }
    ).providers.find((p) => p.provider === "codex");
    expect(codex?.reaped).toContainEqual(expect.objectContaining({ id, status: "done" }));
    const row = store.get(id)!;
    expect(row).toMatchObject({ status: "done", exit_code: 0 });
    expect(row.final_response).toContain("done:");
    store.close();
    const wait = await runDl(["wait", id], { DELEGATE_CODEX_STATE_DIR: stateDir });
    expect(wait.code).toBe(0);
    expect(wait.stdout).toContain(`${id} DONE`);
  }, 120_000);

  test("while its supervisor lives: once the store can be written again, the kept end is recorded without a restart", async () => {
    const live = await connectDl({
      ...codexServeEnv(root, fake.baseUrl, stateDir),
      DELEGATE_CODEX_STAGGER_S: "0",
      ...QUICK_BUSY,
    });
    try {
      const repo = makeRepo(root, "outage-live", 0).repo;
      const sub = (await live.client.callTool({
        name: "submit_codex",
        arguments: { tasks: [{ task: "[slow:1500:live] finish while the store is locked", workdir: repo }] },
      })) as { structuredContent?: { jobs: { id: string }[] } };
      const id = sub.structuredContent!.jobs[0]!.id;
      const store = JobStore.open(stateDir);
      await until(() => store.get(id)?.child_start, "the Codex child to be recorded", 60_000);
      const blocker = new Database(join(stateDir, "jobs.sqlite"));
      // The server may be writing right now: wait for its lock rather than fail on it.
      blocker.exec("PRAGMA busy_timeout = 10000");
      blocker.exec("BEGIN IMMEDIATE");
      // The server tries the end, then its failed/infra fallback, and gives up on both.
      // The job's supervisor says so in its log, in the job's folder.
      const log = join(stateDir, "jobs", id, "supervisor.log");
      await until(
        () => {
          try {
            return readFileSync(log, "utf8").includes("its end is kept and will be recorded");
          } catch {
            return false;
          }
        },
        "the supervisor to give up",
        120_000,
      );
      expect(store.get(id)?.status).toBe("running");
      blocker.exec("ROLLBACK");
      blocker.close();
      await until(() => store.get(id)?.status === "done", "the kept end to be recorded by the live supervisor", 60_000);
      expect(store.get(id)).toMatchObject({ status: "done", exit_code: 0 });
      store.close();
    } finally {
      await live.close();
    }
  }, 240_000);
});
