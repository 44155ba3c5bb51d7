import { afterAll, beforeAll, expect, test } from "bun:test";

import { join } from "node:path";
import type { PollView } from "../../../../src/jobs/engine/poll.ts";
import { type FakeResponses, startFakeResponses } from "../../../fixture/fake-responses.ts";
import { type CodexRig, markerRouter, startCodexRig } from "../../../helpers/codex-home.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { makeRepo, until } from "../../helpers.ts";

/**
 * Caps with the real CLI: two servers (two CodexService instances, each its own engine
 * and server id) on one state dir, and the adaptive cap after three throttles.
 */

const root = tempDir("codex-caps");
let fake: FakeResponses;
const rigs: CodexRig[] = [];
beforeAll(() => {
  fake = startFakeResponses(markerRouter());
});
afterAll(async () => {
  await Promise.all(rigs.map((r) => r.stop()));
  await fake.stop();
});

test("10 tasks over 2 worktrees of one repo and 1 other repo, 2 servers: never over 3 global / 2 per project, all done", async () => {
  const shared = join(root, "shared");
  const caps = { caps: { maxConcurrent: 3, maxPerProject: 2, maxQueue: 32, staggerS: 0 } };
  const a = await startCodexRig(join(root, "a"), { ...caps, stateDir: join(shared, "state") }, fake);
  const b = await startCodexRig(
    join(root, "b"),
    { ...caps, stateDir: join(shared, "state"), codexHome: a.codexHome },
    fake,
  );
  rigs.push(a, b);
  const one = makeRepo(root, "one", 2);
  const other = makeRepo(root, "other", 0);
  const [wt0, wt1] = [one.trees[1]!, one.trees[2]!];
  const task = (i: number, workdir: string) => ({ task: `[slow:400:t${i}] task ${i}`, workdir });
  const subA = await a.service.submit([task(0, wt0), task(1, wt1), task(2, other.repo), task(3, wt0), task(4, wt1)]);
  const subB = await b.service.submit([
    task(5, other.repo),
    task(6, wt0),
    task(7, wt1),
    task(8, other.repo),
    task(9, wt0),
  ]);
  const ids = [...subA.jobs, ...subB.jobs].map((j) => j.id);

  let peakGlobal = 0;
  const peakProject = new Map<string, number>();
  const t0 = performance.now();
  const views = await until(
    async () => {
      const vs = (await a.service.poll(ids)).jobs as PollView[];
      const running = vs.filter((v) => v.status === "running");
      peakGlobal = Math.max(peakGlobal, running.length);
      const perProject = new Map<string, number>();
      for (const v of running) {
        const project = v.workdir.startsWith(other.repo) ? "other" : "one";
        perProject.set(project, (perProject.get(project) ?? 0) + 1);
      }
      for (const [p, k] of perProject) peakProject.set(p, Math.max(peakProject.get(p) ?? 0, k));
      return vs.every((v) => v.status !== "queued" && v.status !== "running") ? vs : null;
    },
    "all 10 jobs to end",
    60_000,
  );
  const ms = Math.round(performance.now() - t0);
  console.log(
    `codex caps: 10 jobs, 2 servers, ${ms} ms; peak running ${peakGlobal}/3 global, per project ${JSON.stringify(Object.fromEntries(peakProject))} (cap 2); fake peak in-flight ${fake.peakInFlight()}`,
  );
  expect(views.map((v) => v.status)).toEqual(Array(10).fill("done"));
  expect(peakGlobal).toBeLessThanOrEqual(3);
  expect(peakProject.get("one") ?? 0).toBeLessThanOrEqual(2);
  expect(peakProject.get("other") ?? 0).toBeLessThanOrEqual(1); // one checkout: one job at a time
  expect(fake.peakInFlight()).toBeLessThanOrEqual(3);
  // The caps were reached, not merely respected by running one at a time.
  expect(peakGlobal).toBe(3);
  // Jobs of server A are visible to server B, read-only.
  expect(((await b.service.poll([ids[0]!])).jobs[0] as PollView).read_only).toBe(true);
}, 60_000);

test("three throttles in the window → adaptive_cap halves the caps; they return after the period", async () => {
  const r = await startCodexRig(
    join(root, "adaptive"),
    {
      caps: { maxConcurrent: 4, maxPerProject: 4, maxQueue: 32, staggerS: 0 },
      backoffS: [0.1, 0.1, 0.1, 0.1, 0.1], // Long enough that a loaded machine still submits the next jobs inside the period.
      accountTuning: { adaptiveMs: 8000 },
    },
    fake,
  );
  rigs.push(r);
  const { trees } = makeRepo(join(root, "adaptive"), "repo", 3);
  const id = (await r.service.submit([{ task: "[throttle:3:adapt] go", workdir: trees[0]! }])).jobs[0]!.id;
  const adaptive = await until(async () => {
    const p = await r.service.poll([]);
    return p.account.adaptive_cap ? p.account : null;
  }, "adaptive_cap");
  expect(adaptive.effective_caps).toEqual({ global: 2, per_project: 2 });
  expect(adaptive.recent_throttles).toBe(3);
  const done = await until(async () => {
    const v = (await r.service.poll([id])).jobs[0] as PollView;
    return v.status === "done" ? v : null;
  }, "the throttled job to finish");
  expect(done.retry_count).toBe(3);

  // While halved, a third job waits with queue_reason adaptive_cap.
  const more = await r.service.submit([1, 2, 3].map((i) => ({ task: `[slow:1500:ad${i}] x`, workdir: trees[i]! })));
  const reasons = await until(async () => {
    const vs = (await r.service.poll(more.jobs.map((j) => j.id))).jobs as PollView[];
    const running = vs.filter((v) => v.status === "running").length;
    const waiting = vs.find((v) => v.queue_reason === "adaptive_cap");
    return running === 2 && waiting ? vs : null;
  }, "two running and one held by adaptive_cap");
  expect(reasons.filter((v) => v.status === "running")).toHaveLength(2);

  const back = await until(
    async () => {
      const acc = (await r.service.poll([])).account;
      return acc.adaptive_cap ? null : acc;
    },
    "the adaptive period to end",
    20_000,
  );
  expect(back.effective_caps).toEqual({ global: 4, per_project: 4 });
  const ends = await until(
    async () => {
      const vs = (await r.service.poll(more.jobs.map((j) => j.id))).jobs as PollView[];
      return vs.every((v) => v.status === "done") ? vs : null;
    },
    "the three jobs",
    20_000,
  );
  expect(ends).toHaveLength(3);
}, 60_000);
