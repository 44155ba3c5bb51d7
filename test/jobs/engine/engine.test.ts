import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDlError } from "../../../src/errors.ts";
import type { JobEngine } from "../../../src/jobs/engine/engine.ts";
import type { PollView } from "../../../src/jobs/engine/poll.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import { testTask } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { liveWith } from "../../helpers/proc.ts";
import { makeRepo, pidAlive, startEngine, until } from "../helpers.ts";

const root = tempFolder("dl-jobs");
afterAll(root.cleanup);
const home = join(root.dir, "home");
mkdirSync(home);
let repo: { repo: string; trees: string[] };
let engine: JobEngine;
const stateDir = join(root.dir, "state");

beforeAll(async () => {
  repo = makeRepo(root.dir, "proj", 3);
  engine = await startEngine(stateDir, home, { retryDelayMs: () => 20, maxRetries: 1 });
});
afterAll(() => engine.stop());

const poll1 = (id: string) => engine.poll([id])[0] as PollView;
const ended = (id: string): Promise<PollView> =>
  until(() => (["queued", "running"].includes(poll1(id).status) ? null : poll1(id)), `job ${id} to end`);

describe("JobEngine", () => {
  test("submit returns ids, watch and watch_hint at once; the job runs to done", async () => {
    const r = await engine.submit([testTask(repo.trees[1]!, { mode: "ok", ms: 50 })]);
    expect(r.jobs).toHaveLength(1);
    const id = r.jobs[0]!.id;
    expect(id).toMatch(/^tj-[0-9a-f]{10}$/);
    expect(r.watch).toBe(`dl wait ${id}`);
    expect(r.watch_hint).toContain(r.watch);
    const v = await ended(id);
    expect(v).toMatchObject({
      status: "done",
      exit_code: 0,
      session_id: `sess-${id}`,
      empty_response: false,
      very_short_run: true,
      owner: { pid: process.pid, alive: true },
    });
    expect(v.final_response).toContain(`finished ${id}`);
    expect(v.elapsed_s).toBeGreaterThanOrEqual(0.05);
    expect(v.usage).toEqual({ stdout_bytes: expect.any(Number) });
  });

  test("linked worktrees share a project; subdirs of one checkout share a workspace root", async () => {
    const sub = join(repo.trees[2]!, "sub");
    mkdirSync(sub, { recursive: true });
    const r = await engine.submit([
      testTask(repo.trees[0]!, { mode: "ok" }),
      testTask(repo.trees[2]!, { mode: "ok" }),
      testTask(sub, { mode: "ok" }),
    ]);
    const [a, b, c] = r.jobs;
    expect(a!.project).toBe(b!.project);
    expect(a!.project).toBe(join(repo.repo, ".git"));
    await Promise.all(r.jobs.map((j) => ended(j.id)));
    // c waited for b: same checkout root.
    expect(c!.workdir).toBe(sub);
  });

  test("submit is atomic: one bad task refuses all, with the guard's failure_kind", async () => {
    const before = engine.list(1000).length;
    const link = join(root.dir, "link-to-state");
    symlinkSync(stateDir, link);
    for (const bad of ["/", home, stateDir, join(stateDir, "jobs"), root.dir, link]) {
      try {
        await engine.submit([testTask(repo.trees[1]!, { mode: "ok" }), testTask(bad, { mode: "ok" })]);
        throw new Error(`accepted ${bad}`);
      } catch (e) {
        expect(isDlError(e, "workdir_forbidden") || isDlError(e, "bad_input")).toBe(true);
        expect((e as Error).message).toContain("task 2");
      }
    }
    await expect(engine.submit([testTask(join(root.dir, "missing"), { mode: "ok" })])).rejects.toThrow(
      /does not exist/,
    );
    expect(engine.list(1000).length).toBe(before);
  });

  test("one job per workspace root: the second waits as workspace_busy, then runs", async () => {
    // The first job holds the root until the test has seen the second wait, then ends.
    const gate = join(root.dir, "workspace-busy.gate");
    const r = await engine.submit([
      testTask(repo.trees[3]!, { mode: "ok", gate }),
      testTask(repo.trees[3]!, { mode: "ok" }),
    ]);
    const [a, b] = r.jobs.map((j) => j.id);
    await until(
      () => poll1(a!).status === "running" && poll1(b!).queue_reason === "workspace_busy",
      "second job to wait on the busy root",
    );
    writeFileSync(gate, "");
    const vb = await ended(b!);
    expect(vb.status).toBe("done");
    expect(poll1(a!).status).toBe("done");
  });

  test("non-zero exits are classified; a throttle is retried before it fails", async () => {
    const r = await engine.submit([
      testTask(repo.trees[1]!, { mode: "fail", exit: 3 }),
      testTask(repo.trees[2]!, { mode: "auth", exit: 1 }),
      testTask(repo.trees[3]!, { mode: "throttle", exit: 1 }),
    ]);
    const [f, a, t] = await Promise.all(r.jobs.map((j) => ended(j.id)));
    expect(f).toMatchObject({ status: "failed", failure_kind: "other", exit_code: 3 });
    expect(a).toMatchObject({ status: "auth_failed", failure_kind: "auth" });
    expect(t).toMatchObject({ status: "failed", failure_kind: "throttle", retry_count: 1 });
  });

  test("the watchdog kills a child that ignores SIGTERM, and its whole group", async () => {
    const r = await engine.submit([testTask(repo.trees[1]!, { mode: "ignore_term" }, 0.4)]);
    const id = r.jobs[0]!.id;
    const running = await until(() => engine.row(id)?.child_pid, "child pid");
    const v = await ended(id);
    expect(v.status).toBe("timeout");
    expect(v.failure_kind).toBe("timeout");
    expect(pidAlive(running)).toBe(false);
  });

  test("a grandchild left behind dies with the job", async () => {
    const r = await engine.submit([testTask(repo.trees[2]!, { mode: "grandchild", ms: 50 })]);
    const v = await ended(r.jobs[0]!.id);
    expect(v.status).toBe("done");
    const marker = /grandchild \d+ (grandchild-of-\d+)/.exec(v.final_response ?? "")?.[1];
    expect(marker).toBeDefined();
    await until(() => liveWith(marker!).length === 0, "grandchild to be gone");
  });

  test("cancel dequeues a queued job, kills a running one, and is a no-op on finished jobs", async () => {
    const r = await engine.submit([
      testTask(repo.trees[1]!, { mode: "ignore_term" }),
      testTask(repo.trees[1]!, { mode: "ok" }),
    ]);
    const [a, b] = r.jobs.map((j) => j.id);
    const pid = await until(() => engine.row(a!)?.child_pid, "child pid");
    expect(await engine.cancel(b!)).toMatchObject({ status: "cancelled", changed: true });
    expect(await engine.cancel(a!)).toMatchObject({ status: "cancelled", changed: true });
    expect(pidAlive(pid)).toBe(false);
    expect(await engine.cancel(a!)).toMatchObject({ status: "cancelled", changed: false });
    // Its workspace lock is free again: a new job on that root starts.
    const n = await engine.submit([testTask(repo.trees[1]!, { mode: "ok" })]);
    expect((await ended(n.jobs[0]!.id)).status).toBe("done");
  });

  test("hostile output reaches poll sanitized and cut, with its full length", async () => {
    const r = await engine.submit([testTask(repo.trees[2]!, { mode: "hostile" })]);
    const v = await ended(r.jobs[0]!.id);
    const text = v.final_response ?? "";
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f\u202e\u2028]/);
    expect(text).toContain("red");
    expect(text.length).toBeLessThanOrEqual(4000);
    expect(v.truncated).toBe(true);
    expect(v.final_response_length).toBeGreaterThan(1_000_000);
  });

  test("unknown ids say so", () => {
    expect(engine.poll(["tj-nope"])[0]).toMatchObject({ id: "tj-nope", status: "unknown" });
  });

  test("the queue bound counts free slots; over it nothing is recorded", async () => {
    const dir = join(root.dir, "state-bound");
    const e = await startEngine(dir, home, {
      maxConcurrent: 1,
      maxPerProject: 1,
      maxQueue: 1,
      guards: { home, protectedDirs: [dir], toolEnv: { PATH: "/usr/bin:/bin" } },
    });
    try {
      await e.submit([
        testTask(repo.trees[1]!, { mode: "silent", ms: 30_000 }), // still running at the third submit; stop() ends it
        testTask(repo.trees[2]!, { mode: "ok" }),
      ]);
      await expect(e.submit([testTask(repo.trees[3]!, { mode: "ok" })])).rejects.toThrow(/queue is full/);
      expect(e.list(10)).toHaveLength(2);
    } finally {
      await e.stop();
    }
  });

  test("a per-project cap above the global cap is refused; an unwritable state dir fails closed", async () => {
    await expect(startEngine(join(root.dir, "s2"), home, { maxConcurrent: 1, maxPerProject: 2 })).rejects.toThrow(
      /per-project/,
    );
    const file = join(root.dir, "plainfile");
    writeFileSync(file, "x");
    chmodSync(file, 0o400);
    try {
      await startEngine(join(file, "state"), home);
      throw new Error("started");
    } catch (e) {
      expect(isDlError(e, "storage")).toBe(true);
    }
  });
  test("graceful stop kills running jobs, cancels queued ones and records server_stopped", async () => {
    const dir = join(root.dir, "state-stop");
    const e = await startEngine(dir, home, {
      guards: { home, protectedDirs: [dir], toolEnv: { PATH: "/usr/bin:/bin" } },
    });
    const r = await e.submit([
      testTask(repo.trees[1]!, { mode: "ignore_term" }),
      testTask(repo.trees[1]!, { mode: "ok" }),
    ]);
    const [a, b] = r.jobs.map((j) => j.id) as [string, string];
    const pid = await until(() => e.row(a)?.child_pid, "child pid");
    await e.stop();
    expect(pidAlive(pid)).toBe(false);
    const s = JobStore.open(dir);
    expect(s.getMany([a, b]).map((x) => [x.status, x.failure_kind])).toEqual([
      ["cancelled", "server_stopped"],
      ["cancelled", "server_stopped"],
    ]);
    s.close();
  });

  test("launches are staggered by at least staggerMs", async () => {
    const dir = join(root.dir, "state-stagger");
    const e = await startEngine(dir, home, {
      staggerMs: 150,
      guards: { home, protectedDirs: [dir], toolEnv: { PATH: "/usr/bin:/bin" } },
    });
    try {
      const r = await e.submit([1, 2, 3].map((i) => testTask(repo.trees[i]!, { mode: "ok" })));
      const ids = r.jobs.map((j) => j.id);
      await until(() => ids.every((id) => e.row(id)?.status === "done"), "three jobs done");
      const starts = ids.map((id) => e.row(id)!.started_at!);
      expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(150);
      expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(150);
    } finally {
      await e.stop();
    }
  });
});
