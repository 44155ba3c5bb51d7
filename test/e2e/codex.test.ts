import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { codexServeEnv, markerRouter } from "../helpers/codex-home.ts";
import { connectDl, type DlSession, requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { connectInProcess } from "../helpers/in-process.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Codex jobs through the product: the compiled `dl serve`, the SDK's Client, the real
 * Codex CLI from npm against a local fake of the Responses API, and `dl wait` as the
 * completion signal.
 */
type JobView = {
  id: string;
  status: string;
  workdir: string;
  final_response?: string;
  queue_reason?: string | null;
  failure_kind?: string | null;
};
type Structured<T> = { structuredContent?: unknown } & T;

let fake: FakeResponses;
let session: DlSession;
let root: string;
let stateDir: string;

function serveEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    // The CLI's plugin marketplace as a user's CODEX_HOME has it (on): the other files turn it off.
    ...codexServeEnv(root, fake.baseUrl, stateDir, { plugins: true, npm: true }),
    DELEGATE_CODEX_MAX_CONCURRENT: "3",
    DELEGATE_CODEX_MAX_PER_PROJECT: "2",
    DELEGATE_CODEX_STAGGER_S: "0",
    ...extra,
  };
}

beforeAll(async () => {
  fake = startFakeResponses(markerRouter());
  root = tempDir("codex-e2e");
  stateDir = join(root, "codex-jobs");
  session = await connectDl(serveEnv());
});
afterAll(async () => {
  await session?.close();
  await fake?.stop();
});

const call = <T>(name: string, args: Record<string, unknown>) => callOn<T>(session, name, args);

const callOn = async <T>(
  s: DlSession,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError?: boolean; text: string; data: T }> => {
  const res = (await s.client.callTool(
    { name, arguments: args },
    {
      timeout: 120_000,
    },
  )) as Structured<{
    isError?: boolean;
    content: { type: string; text: string }[];
  }>;
  return { isError: res.isError, text: res.content[0]?.text ?? "", data: res.structuredContent as T };
};

describe("Codex jobs through dist/dl serve with the real CLI", () => {
  test("10 tasks over 2 worktrees of one repo and 1 other repo, 2 servers on one state dir: never over 3 global / 2 per project / 1 per checkout, the caps reached, all done, dl wait --all exits 0", async () => {
    // A second server on the same state dir: jobs of both share the caps.
    const b = await connectDl(serveEnv());
    try {
      const one = makeRepo(root, "one", 2);
      const other = makeRepo(root, "other", 0);
      const trees = [one.trees[1]!, one.trees[2]!, other.repo];
      const tasks = (from: number) =>
        Array.from({ length: 5 }, (_, k) => ({
          task: `[slow:400:t${from + k}] task ${from + k}: say done`,
          workdir: trees[(from + k) % 3]!,
        }));
      type Submitted = { jobs: { id: string }[]; watch: string; watch_hint: string };
      const subA = await call<Submitted>("submit_codex", { tasks: tasks(0) });
      const subB = await callOn<Submitted>(b, "submit_codex", { tasks: tasks(5) });
      expect(subA.isError).toBeFalsy();
      expect(subB.isError).toBeFalsy();
      const ids = [...subA.data.jobs, ...subB.data.jobs].map((j) => j.id);
      expect(ids).toHaveLength(10);
      expect(subA.data.watch).toBe(`${requireBinary()} wait ${subA.data.jobs.map((j) => j.id).join(" ")}`);
      expect(subA.data.watch_hint).toContain("background");

      // The watcher exactly as the orchestrator would start it, over both servers' jobs.
      const watcher = Bun.spawn([...subA.data.watch.split(" ").slice(0, 2), "--all", ...ids], {
        env: testEnv({ DELEGATE_CODEX_STATE_DIR: stateDir }),
        stdout: "pipe",
        stderr: "pipe",
      });

      // Sample the live view while jobs run: never more than 3 at once, 2 per project, 1 per checkout.
      let peak = 0;
      const peakProject = { one: 0, other: 0 };
      let views: JobView[] = [];
      for (;;) {
        const polled = await call<{ jobs: JobView[]; account: { state: string } }>("poll_codex", { ids });
        views = polled.data.jobs;
        const running = views.filter((v) => v.status === "running");
        peak = Math.max(peak, running.length);
        const inOther = running.filter((v) => v.workdir.startsWith(other.repo)).length;
        peakProject.one = Math.max(peakProject.one, running.length - inOther);
        peakProject.other = Math.max(peakProject.other, inOther);
        if (views.every((v) => !["queued", "running"].includes(v.status))) break;
        // Sampling period, not a wait for a condition. Each job runs 400 ms in the fake
        // plus the CLI's own start, so a 4th job over a cap would run for longer than two
        // periods: 100 ms still sees it (and peak 3), at less than half the polls of 40 ms.
        await Bun.sleep(100);
      }
      const [out, code] = await Promise.all([new Response(watcher.stdout).text(), watcher.exited]);
      console.log(
        `codex e2e: 10 jobs, 2 servers, peak running ${peak} (cap 3), per project ${JSON.stringify(peakProject)} (cap 2, 1 per checkout), fake peak in flight ${fake.peakInFlight()}`,
      );
      expect(views.map((v) => v.status)).toEqual(Array(10).fill("done"));
      expect(views.every((v) => (v.final_response ?? "").includes("done"))).toBe(true);
      expect(peak).toBeLessThanOrEqual(3);
      expect(peakProject.one).toBeLessThanOrEqual(2);
      expect(peakProject.other).toBeLessThanOrEqual(1); // one checkout: one job at a time
      expect(fake.peakInFlight()).toBeLessThanOrEqual(3);
      // The caps were reached, not merely respected by running one at a time.
      expect(peak).toBe(3);
      expect(code).toBe(0);
      expect(out.trim().split("\n")).toHaveLength(10);
      // Jobs of server A are visible to server B, read-only.
      const seen = await callOn<{ jobs: (JobView & { read_only?: boolean })[] }>(b, "poll_codex", { ids: [ids[0]!] });
      expect(seen.data.jobs[0]!.read_only).toBe(true);
    } finally {
      await b.close();
    }
  }, 60_000);

  test("delegate_to_codex blocks until the job ends and returns its view; bad input is refused with the allowed list", async () => {
    const repo = makeRepo(root, "solo", 0).repo;
    const r = await call<JobView & { usage?: Record<string, number> }>("delegate_to_codex", {
      task: "[slow:50:solo] hello",
      workdir: repo,
      model: "luna",
      sandbox: "read-only",
    });
    expect(r.isError).toBeFalsy();
    expect(r.data.status).toBe("done");
    expect(r.data.final_response).toContain("done");
    expect(r.data).toMatchObject({ status: "done", final_response: "done: [slow:50:solo] hello" });

    const badModel = await call("delegate_to_codex", { task: "x", workdir: repo, model: "gpt-5.6" });
    expect(badModel.isError).toBe(true);
    expect(badModel.text).toContain("gpt-6.1-terra");
    const home = await call("submit_codex", { tasks: [{ task: "x", workdir: process.env.HOME }] });
    expect(home.isError).toBe(true);
    const danger = await call("submit_codex", { tasks: [{ task: "x", workdir: repo, sandbox: "danger-full-access" }] });
    expect(danger.isError).toBe(true);
    expect(danger.text).toContain("DELEGATE_CODEX_ALLOW_DANGER");
  });

  test("dl's own dirs are refused as workdirs with a structured failure_kind; a fractional timeout_s is refused", async () => {
    // The state dir is overridden here, so ~/.codex-jobs is the default one: still protected.
    const cache = join(process.env.XDG_CACHE_HOME!, "claude-delegate-local", "slots");
    const defaultState = join(process.env.HOME!, ".codex-jobs", "jobs");
    for (const dir of [cache, defaultState]) {
      mkdirSync(dir, { recursive: true });
      const r = await call<{ failure_kind?: string; code?: string }>("submit_codex", {
        tasks: [{ task: "x", workdir: dir }],
      });
      expect(r.isError).toBe(true);
      expect(r.text).toContain("overlaps dl's own state");
      expect(r.data).toMatchObject({ failure_kind: "workdir_forbidden", code: "workdir_forbidden" });
    }
    const blocking = await call<{ failure_kind?: string }>("delegate_to_codex", { task: "x", workdir: cache });
    expect(blocking.isError).toBe(true);
    expect(blocking.data?.failure_kind).toBe("workdir_forbidden");
    const repo = makeRepo(root, "fraction", 0).repo;
    const frac = await call("submit_codex", { tasks: [{ task: "x", workdir: repo, timeout_s: 1.5 }] });
    expect(frac.isError).toBe(true);
    expect(frac.text).toContain("whole number of seconds");
  });

  test("cancel_codex ends a running job cancelled; a finished job is left alone", async () => {
    const repo = makeRepo(root, "cancel", 0).repo;
    const sub = await call<{ jobs: { id: string }[] }>("submit_codex", {
      tasks: [{ task: "[hang:0:c1] wait forever", workdir: repo }],
    });
    const id = sub.data.jobs[0]!.id;
    await until(
      async () => {
        const v = (await call<{ jobs: JobView[] }>("poll_codex", { ids: [id] })).data.jobs[0]!;
        expect(["queued", "running"]).toContain(v.status);
        return v.status === "running";
      },
      "the job to run",
      30_000,
    );
    const c = await call<{ status: string; changed: boolean }>("cancel_codex", { id });
    expect(c.data.status).toBe("cancelled");
    const again = await call<{ status: string; changed: boolean }>("cancel_codex", { id });
    expect(again.data.changed).toBe(false);
    const unknown = await call<{ jobs: JobView[] }>("poll_codex", { ids: ["cx-nope"] });
    expect(unknown.data.jobs[0]?.status).toBe("unknown");
  });

  test("a missing Codex binary: the server still starts and the tools say what to install", async () => {
    const s = await connectInProcess(
      serveEnv({
        DELEGATE_CODEX_BIN: join(root, "no-such-codex"),
        DELEGATE_CODEX_STATE_DIR: join(root, "other-state"),
      }),
    );
    try {
      const res = await s.client.callTool({
        name: "submit_codex",
        arguments: { tasks: [{ task: "x", workdir: makeRepo(root, "missing", 0).repo }] },
      });
      expect(res.isError).toBe(true);
      expect(JSON.stringify(res.content)).toMatch(/codex/i);
      expect((await s.client.listTools()).tools.map((t) => t.name)).toContain("poll_codex");
    } finally {
      await s.close();
    }
  });
});
