import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { JobStore } from "../../../src/store/jobs.ts";
import { testTask } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { childStarted, makeRepo, pidAlive, until } from "../helpers.ts";
import { type ServerProc, startServerProc } from "../server-proc.ts";

/**
 * A server that dies (SIGKILL) while holding the only slot must not stall the live
 * servers on the same state dir: they end its rows themselves, without a restart.
 */
const root = tempFolder("dl-live-reap");
const home = join(root.dir, "home");
const servers: ServerProc[] = [];
afterAll(() => {
  for (const s of servers) s.proc.kill("SIGKILL");
  root.cleanup();
});
const start = async (cfg: Record<string, unknown>) => {
  const s = await startServerProc({ home, ...cfg });
  servers.push(s);
  return s;
};
const submit = async (s: ServerProc, tasks: unknown[]) =>
  (await s.call<{ jobs: { id: string }[] }>({ op: "submit", tasks })).jobs.map((j) => j.id);

describe("live servers reap a dead server's rows", () => {
  test("cap 1: the dead server's running job is killed_on_restart and the live server's queued job runs", async () => {
    const stateDir = join(root.dir, "state-admit");
    const { trees } = makeRepo(root.dir, "admit", 1);
    const cfg = { stateDir, maxConcurrent: 1, maxPerProject: 1, tickMs: 40 };
    const a = await start(cfg);
    const b = await start(cfg);
    const events = join(root.dir, "admit.events");
    const [held] = await submit(a, [testTask(trees[0]!, { mode: "silent", ms: 60_000, events })]);
    const store = JobStore.open(stateDir);
    await until(() => childStarted(events, held!), "A's job to run");
    const orphan = store.get(held!)!.child_pid!;
    const [mine] = await submit(b, [testTask(trees[1]!, { mode: "ok", ms: 20 })]);
    await until(() => store.get(mine!)?.queue_reason === "global_cap", "B's job to wait for the global slot");

    a.proc.kill("SIGKILL");
    await a.proc.exited;
    const t0 = Date.now();
    await until(() => store.get(mine!)?.status === "done", "B's job to run after A died");
    console.log(`B's queued job ran ${Date.now() - t0} ms after A was SIGKILLed`);
    expect(store.get(held!)).toMatchObject({ status: "killed_on_restart", persist_error: null });
    // The orphan was killed before B's job started: the cap held throughout.
    expect(pidAlive(orphan)).toBe(false);
    expect(store.get(held!)!.ended_at!).toBeLessThanOrEqual(store.get(mine!)!.started_at!);
    store.close();
    await b.call({ op: "stop" });
  });

  test("a dead server's queued rows do not count against a live server's queue bound", async () => {
    const stateDir = join(root.dir, "state-bound");
    const { trees } = makeRepo(root.dir, "bound", 3);
    // B ticks rarely, so its submit meets A's rows before any admission pass could.
    const a = await start({ stateDir, maxConcurrent: 1, maxPerProject: 1, maxQueue: 1, tickMs: 40 });
    const b = await start({ stateDir, maxConcurrent: 1, maxPerProject: 1, maxQueue: 1, tickMs: 60_000 });
    const events = join(root.dir, "bound.events");
    const [run, wait] = await submit(a, [
      testTask(trees[0]!, { mode: "silent", ms: 60_000, events }),
      testTask(trees[1]!, { mode: "ok" }),
    ]);
    const store = JobStore.open(stateDir);
    await until(() => childStarted(events, run!), "A's first job to run");
    a.proc.kill("SIGKILL");
    await a.proc.exited;
    // One free slot, one bound: two new jobs fit only if A's queued row no longer counts.
    const ids = await submit(b, [testTask(trees[2]!, { mode: "ok" }), testTask(trees[3]!, { mode: "ok" })]);
    expect(store.getMany([run!, wait!]).map((r) => r.status)).toEqual(["killed_on_restart", "lost"]);
    await until(() => store.getMany(ids).every((r) => r.status === "done"), "B's two jobs to run");
    store.close();
    await b.call({ op: "stop" });
  });
});
