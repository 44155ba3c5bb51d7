import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { JobLocks } from "../../../src/jobs/engine/machine.ts";
import { flockJobLocks } from "../../../src/jobs/engine/machine.ts";
import { testTask } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { makeRepo, startEngine, until } from "../helpers.ts";

const root = tempFolder("dl-engine-locks");
afterAll(root.cleanup);
const home = join(root.dir, "home");
mkdirSync(home);

/** Real flock pools, except that the next `failures` tryProject calls throw. */
function flakyProjectLocks(stateDir: string): JobLocks & { failures: number; thrown: number } {
  const real = flockJobLocks(stateDir);
  const l = {
    ...real,
    failures: 0,
    thrown: 0,
    tryProject(project: string, size: number, jobId: string) {
      if (l.failures > 0) {
        l.failures--;
        l.thrown++;
        throw Object.assign(new Error("EMFILE: too many open files, open '.../slots/project-x/0.lock'"), {
          code: "EMFILE",
        });
      }
      return real.tryProject(project, size, jobId);
    },
  };
  return l;
}

describe("a lock call that throws", () => {
  test("releases the locks already taken; a passing fault is retried, a lasting one ends the job failed (infra)", async () => {
    const stateDir = join(root.dir, "state");
    const { trees } = makeRepo(root.dir, "proj", 0);
    const locks = flakyProjectLocks(stateDir);
    const e = await startEngine(stateDir, home, {
      locks,
      tickMs: 20,
      guards: { home, protectedDirs: [stateDir], toolEnv: { PATH: "/usr/bin:/bin" } },
    });
    const ended = (id: string) =>
      until(() => (["queued", "running"].includes(e.row(id)!.status) ? null : e.row(id)), `job ${id} to end`);
    const slotsFree = () => {
      // Another holder (a separate open file description, like another server) gets them.
      const probe = flockJobLocks(stateDir);
      const ws = probe.tryWorkspace(trees[0]!, "probe");
      expect(ws).not.toBeNull();
      ws!.release();
      expect(probe.freeGlobal(4)).toBe(4);
    };
    try {
      locks.failures = 1;
      const once = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      expect(await ended(once)).toMatchObject({ status: "done" });
      expect(locks.thrown).toBe(1);
      slotsFree();

      locks.failures = 1000;
      const bad = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      const row = await ended(bad);
      expect(row).toMatchObject({ status: "failed", failure_kind: "infra" });
      expect(row!.final_response).toContain("EMFILE");
      expect(locks.thrown).toBe(4); // 1 + 3 attempts
      slotsFree();

      locks.failures = 0;
      const ok = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      expect(await ended(ok)).toMatchObject({ status: "done" });
    } finally {
      await e.stop();
    }
  });
});

describe("the flock slots are the caps, whatever the rows say", () => {
  /**
   * Another server holding slots shows in no row of this store's plan: only the flock
   * pools know. A job must stay queued while its global or project slots are all held.
   */
  test("all global slots or all project slots held elsewhere: the job stays queued until one is freed", async () => {
    const stateDir = join(root.dir, "state-held");
    const { trees } = makeRepo(root.dir, "held", 0);
    const e = await startEngine(stateDir, home, {
      tickMs: 20,
      guards: { home, protectedDirs: [stateDir], toolEnv: { PATH: "/usr/bin:/bin" } },
    });
    const other = flockJobLocks(stateDir);
    const ended = (id: string) =>
      until(() => (["queued", "running"].includes(e.row(id)!.status) ? null : e.row(id)), `job ${id} to end`);
    const waitsFor = (id: string, reason: string) =>
      until(() => e.row(id)!.queue_reason === reason || e.row(id)!.status !== "queued", `job ${id} to wait`);
    try {
      const first = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      expect(await ended(first)).toMatchObject({ status: "done" });
      const project = e.row(first)!.project;

      const globals = [0, 1, 2, 3].map(() => other.tryGlobal(4, "elsewhere"));
      expect(globals.every(Boolean)).toBe(true);
      const g = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      await waitsFor(g, "global_cap");
      expect(e.row(g)).toMatchObject({ status: "queued", queue_reason: "global_cap" });
      globals[0]!.release();
      expect(await ended(g)).toMatchObject({ status: "done" });
      for (const l of globals.slice(1)) l!.release();

      const projects = [0, 1].map(() => other.tryProject(project, 2, "elsewhere"));
      expect(projects.every(Boolean)).toBe(true);
      const p = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      await waitsFor(p, "waiting_for_slot");
      expect(e.row(p)).toMatchObject({ status: "queued", queue_reason: "waiting_for_slot" });
      projects[0]!.release();
      expect(await ended(p)).toMatchObject({ status: "done" });
      projects[1]!.release();

      const ws = other.tryWorkspace(trees[0]!, "elsewhere");
      expect(ws).not.toBeNull();
      const w = (await e.submit([testTask(trees[0]!, { mode: "ok" })])).jobs[0]!.id;
      await waitsFor(w, "workspace_busy");
      expect(e.row(w)).toMatchObject({ status: "queued", queue_reason: "workspace_busy" });
      ws!.release();
      expect(await ended(w)).toMatchObject({ status: "done" });
    } finally {
      await e.stop();
    }
  });
});
