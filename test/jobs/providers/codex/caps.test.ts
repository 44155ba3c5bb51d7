import { afterAll, beforeAll, expect, test } from "bun:test";

import { join } from "node:path";
import type { PollView } from "../../../../src/jobs/engine/poll.ts";
import { type FakeResponses, startFakeResponses } from "../../../fixture/fake-responses.ts";
import { type CodexRig, markerRouter, startCodexRig } from "../../../helpers/codex-home.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { makeRepo, until } from "../../helpers.ts";

/**
 * The adaptive cap with the real CLI: three throttles halve the caps for a while. (The
 * fixed caps over two servers on one state dir are tested through dist/dl, in
 * test/e2e/codex.test.ts.)
 */

const root = tempDir("codex-caps");
/**
 * Waits for runs of the real CLI. Four runs (three throttled, one that succeeds) take 2.4 s
 * alone here and took over 10 s once in a full-suite run on a 2-core machine.
 */
const JOB_RUNS_MS = 30_000;
let fake: FakeResponses;
const rigs: CodexRig[] = [];
beforeAll(() => {
  fake = startFakeResponses(markerRouter());
});
afterAll(async () => {
  await Promise.all(rigs.map((r) => r.stop()));
  await fake.stop();
});

test("three throttles in the window → adaptive_cap halves the caps; they return after the period", async () => {
  const r = await startCodexRig(
    join(root, "adaptive"),
    {
      caps: { maxConcurrent: 4, maxPerProject: 4, maxQueue: 32, staggerS: 0 },
      backoffS: [0.1, 0.1, 0.1, 0.1, 0.1], // Long enough that a loaded machine still submits the next jobs inside the period.
      // The halved caps must outlast the throttled job's last run and the next submit on a
      // loaded machine (8 s did not, once, in a full-suite run beside other work).
      accountTuning: { adaptiveMs: 15_000 },
    },
    fake,
  );
  rigs.push(r);
  const { trees } = makeRepo(join(root, "adaptive"), "repo", 3);
  const id = (await r.service.submit([{ task: "[throttle:3:adapt] go", workdir: trees[0]! }])).jobs[0]!.id;
  const adaptive = await until(
    async () => {
      const p = await r.service.poll([]);
      return p.account.adaptive_cap ? p.account : null;
    },
    "adaptive_cap",
    JOB_RUNS_MS,
  );
  expect(adaptive.effective_caps).toEqual({ global: 2, per_project: 2 });
  expect(adaptive.recent_throttles).toBe(3);
  const done = await until(
    async () => {
      const v = (await r.service.poll([id])).jobs[0] as PollView;
      return v.status === "done" ? v : null;
    },
    "the throttled job to finish",
    JOB_RUNS_MS,
  );
  expect(done.retry_count).toBe(3);

  // While halved, a third job waits with queue_reason adaptive_cap. Each run lasts 3 s, so
  // the first two overlap even when one starts late on a loaded machine; all three still end
  // well inside the 15 s period.
  const more = await r.service.submit([1, 2, 3].map((i) => ({ task: `[slow:3000:ad${i}] x`, workdir: trees[i]! })));
  const reasons = await until(
    async () => {
      const vs = (await r.service.poll(more.jobs.map((j) => j.id))).jobs as PollView[];
      const running = vs.filter((v) => v.status === "running").length;
      const waiting = vs.find((v) => v.queue_reason === "adaptive_cap");
      return running === 2 && waiting ? vs : null;
    },
    "two running and one held by adaptive_cap",
    JOB_RUNS_MS,
  );
  expect(reasons.filter((v) => v.status === "running")).toHaveLength(2);

  const back = await until(
    async () => {
      const acc = (await r.service.poll([])).account;
      return acc.adaptive_cap ? null : acc;
    },
    "the adaptive period to end",
    40_000,
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
}, 150_000);
