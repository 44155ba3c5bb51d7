import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { callTool, requireBinary, runDl, testEnv } from "../helpers/dl.ts";
import {
  dshFile,
  events,
  LAUNCHER,
  openGatesAfterStarts,
  peaks,
  pollUntilEnded,
  type Submitted,
  task,
} from "../helpers/dsh-jobs.ts";
import { liveWith } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * dsh launcher jobs through the product, one server at a time (helpers/dsh-jobs.ts says
 * how); the caps across servers are dsh-caps.test.ts (the two files run side by side).
 */
const f = dshFile("dsh-e2e");
const { serve, serveInProcess } = f;
const call = callTool;

/**
 * The server of the tests that need nothing of their own (default caps, one state dir):
 * started by the first, it ends with the file. Their jobs have ended when each test does.
 */
let mainServer: ReturnType<typeof f.keep> | undefined;
const main = () => {
  mainServer ??= f.keep(join(f.root, "state-main"));
  return mainServer;
};
afterAll(() => f.closeKept());

describe("dsh jobs through dist/dl serve with the fake launcher", () => {
  test("4 tasks over 2 worktrees: never more than 2 at once, all done with out_dir and diff_stat, watch exits 0", async () => {
    const stateDir = join(f.root, "state-main");
    const log = join(f.root, "events-main.log");
    const s = await main();
    const { trees } = makeRepo(f.root, "main", 2);
    // The first two hold their slots until the test has seen both start: the peak of 2
    // shows both slots in use, however slowly each job's supervisor started.
    const tasks = [0, 1, 2, 3].map((i) => task(trees[1 + (i % 2)]!, { events: log, await: "go" }));
    const sub = await call<Submitted>(s, "submit_dsh", { tasks });
    expect(sub.isError).toBeFalsy();
    const ids = sub.data.jobs.map((j) => j.id);
    expect(ids.every((id) => id.startsWith("dsh-"))).toBe(true);
    expect(sub.data.watch).toBe(`${requireBinary()} wait ${ids.join(" ")}`);
    expect(sub.data.watch_hint).toContain("background");
    expect(sub.data.jobs[0]!.warnings).toEqual(["model alias ds-flash → deepseek-v4-flash"]);

    const watcher = Bun.spawn(sub.data.watch.split(" "), {
      env: testEnv({ DELEGATE_DSH_STATE_DIR: stateDir }),
      stdout: "pipe",
      stderr: "pipe",
    });
    await openGatesAfterStarts(log, 2, trees.slice(1), "go");
    const [out, code] = await Promise.all([new Response(watcher.stdout).text(), watcher.exited]);
    const jobs = await pollUntilEnded(s, ids);
    const evs = events(log);
    const p = peaks(evs);
    console.log(`dsh e2e: 4 jobs, peak launchers alive ${p.all} (cap 2)`);
    expect(code).toBe(0);
    expect(out.trim().split("\n")).toHaveLength(4);
    expect(evs.filter((e) => e.kind === "start")).toHaveLength(4);
    expect(p.all).toBe(2);
    for (const j of jobs) {
      expect(j.status).toBe("done");
      // The launcher is given the alias, which it looks up in its own models.json.
      expect(j.final_response).toBe("Did the task with ds-flash.");
      expect(j.out_dir).toBe(join(stateDir, "jobs", j.id, "out"));
      expect(readFileSync(join(j.out_dir!, "change.patch"), "utf8")).toContain("ds-flash");
      expect(j.diff_stat).toBe(" x | 1 +\n 1 file changed");
      expect(j.tokens).toEqual({ input: 1200, output: 340 });
      expect(j.wall_s).toBe(0.1);
      // The task went through a private file, never argv.
      const taskFile = join(stateDir, "jobs", j.id, "task.md");
      expect(readFileSync(taskFile, "utf8")).toContain("Do the task.");
      expect(statSync(taskFile).mode & 0o777).toBe(0o600);
    }
    // The checkouts are not touched: the change stays in the run dir.
    expect(existsSync(join(trees[1]!, "change.patch"))).toBe(false);
  });

  test("the models allowlist: mimo/xiaomi, unknown and disabled are refused and nothing starts", async () => {
    const stateDir = join(f.root, "state-allow");
    const log = join(f.root, "events-allow.log");
    const s = await serveInProcess(stateDir);
    const repo = makeRepo(f.root, "allow", 0).repo;
    const good = task(repo, { events: log });
    const cases: [string, RegExp][] = [
      ["mimo-v2", /Xiaomi MiMo models may not be dispatched automatically.*terms forbid automation/],
      ["mimo-v2-flash", /Xiaomi MiMo/],
      ["xiaomi/mimo-v2", /Xiaomi MiMo/],
      ["XiaoMi-Token", /Xiaomi MiMo/],
      ["gpt-9", /unknown dsh model "gpt-9".*enabled in .*: ds-flash/],
      ["ds-off", /"ds-off" is disabled.*enabled: ds-flash/],
    ];
    for (const [model, why] of cases) {
      const r = await call(s, "submit_dsh", { tasks: [good, { ...good, model }] });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(why);
      expect(r.text).toContain("task 2:");
      expect(r.text).toContain("nothing was started");
    }
    const noModel = await call(s, "submit_dsh", { tasks: [{ task: "x", workdir: repo }] });
    expect(noModel.isError).toBe(true);
    expect(noModel.text).toMatch(/model/);
    // Nothing was recorded, nothing ran.
    const store = JobStore.open(stateDir);
    try {
      expect(store.listRecent(10)).toHaveLength(0);
    } finally {
      store.close();
    }
    expect(events(log)).toHaveLength(0);

    const noFile = await serveInProcess(join(f.root, "state-nofile"), {
      DELEGATE_DSH_MODELS_FILE: join(f.root, "nope.json"),
    });
    const r = await call(noFile, "submit_dsh", { tasks: [good] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`the models file ${join(f.root, "nope.json")} does not exist`);
    expect(r.text).toContain("DELEGATE_DSH_MODELS_FILE");
  });

  test("workdir defaults to the server's directory; $HOME is refused", async () => {
    const s = await main();
    const r = await call(s, "submit_dsh", { tasks: [{ task: "x", model: "ds-flash", workdir: process.env.HOME }] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("refused");
    const rel = await call<Submitted>(s, "submit_dsh", { tasks: [{ task: "MODE: ok\nx", model: "ds-flash" }] });
    // The test runner's cwd is this checkout: '.' resolves there.
    expect(rel.isError).toBeFalsy();
    const [view] = await pollUntilEnded(s, [rel.data.jobs[0]!.id]);
    expect(view!.workdir).toBe(process.cwd());
    expect(view!.status).toBe("done");
  });

  test("failures: fail, malformed, missing and crash end failed with the reason and the launcher's output", async () => {
    const s = await serve(join(f.root, "state-fail"), {
      DELEGATE_DSH_MAX_CONCURRENT: "4",
      DELEGATE_DSH_MAX_PER_PROJECT: "4",
    });
    const modes = ["fail", "malformed", "missing", "crash"];
    const tasks = modes.map((mode) => task(makeRepo(f.root, `fail-${mode}`, 0).repo, { mode }));
    const sub = await call<Submitted>(s, "submit_dsh", { tasks });
    const jobs = await pollUntilEnded(
      s,
      sub.data.jobs.map((j) => j.id),
    );
    const byMode = Object.fromEntries(modes.map((m, i) => [m, jobs[i]!]));
    for (const j of jobs) {
      expect(j.status).toBe("failed");
      expect(j.final_response).toContain("launcher output (end):");
      expect(j.final_response).toContain("dsh: model ds-flash in");
    }
    expect(byMode.fail!.final_response).toContain("the dsh run ended failed (rc 1)");
    expect(byMode.fail!.final_response).toContain("summary: tests still red");
    expect(byMode.fail!.failure_kind).toBe("other");
    expect(byMode.malformed!.final_response).toContain("result.json is not JSON");
    expect(byMode.malformed!.failure_kind).toBe("infra");
    expect(byMode.missing!.final_response).toContain("the launcher wrote no result.json");
    expect(byMode.crash!.final_response).toContain("the dsh launcher exited 3");
    expect(byMode.crash!.final_response).toContain("harness crashed: out of memory");
  });

  test("timeout kills the launcher's group, even one that ignores SIGTERM", async () => {
    const log = join(f.root, "events-timeout.log");
    const s = await main();
    const sub = await call<Submitted>(s, "submit_dsh", {
      tasks: [task(makeRepo(f.root, "timeout", 0).repo, { mode: "hang", events: log }, { timeout_s: 3 })],
    });
    const [job] = await pollUntilEnded(s, [sub.data.jobs[0]!.id], 30_000);
    expect(job!.status).toBe("timeout");
    expect(liveWith(events(log)[0]!.out)).toEqual([]);
  });

  test("cancel_dsh: a queued job is dequeued, a running one's group is killed", async () => {
    const log = join(f.root, "events-cancel.log");
    const s = await serve(join(f.root, "state-cancel"), {
      DELEGATE_DSH_MAX_CONCURRENT: "1",
      DELEGATE_DSH_MAX_PER_PROJECT: "1",
    });
    const tasks = [0, 1].map((i) => task(makeRepo(f.root, `cancel-${i}`, 0).repo, { mode: "hang", events: log }));
    const sub = await call<Submitted>(s, "submit_dsh", { tasks });
    const [running, queued] = sub.data.jobs.map((j) => j.id) as [string, string];
    await until(() => events(log).some((e) => e.id === running && e.kind === "start"), "the first job to start");
    const q = await call<{ status: string; changed: boolean }>(s, "cancel_dsh", { id: queued });
    expect(q.data).toMatchObject({ status: "cancelled", changed: true });
    const r = await call<{ status: string; changed: boolean }>(s, "cancel_dsh", { id: running });
    expect(r.data).toMatchObject({ status: "cancelled", changed: true });
    expect(liveWith(events(log)[0]!.out)).toEqual([]);
    // The queued one never ran.
    expect(events(log).filter((e) => e.id === queued)).toHaveLength(0);
    const again = await call<{ changed: boolean }>(s, "cancel_dsh", { id: running });
    expect(again.data.changed).toBe(false);
    const unknown = await call<{ jobs: { status: string }[] }>(s, "poll_dsh", { ids: ["dsh-nope"] });
    expect(unknown.data.jobs[0]!.status).toBe("unknown");
  });

  test("a missing launcher: the server starts and the tools say what to install or set", async () => {
    const s = await serveInProcess(join(f.root, "state-nolauncher"), { DELEGATE_DSH_LAUNCHER: "no-such-dsh-herdr.sh" });
    const r = await call(s, "submit_dsh", { tasks: [task(makeRepo(f.root, "nolauncher", 0).repo, {})] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("no-such-dsh-herdr.sh");
    expect(r.text).toContain("DELEGATE_DSH_LAUNCHER");
    const tools = (await s.client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["submit_dsh", "poll_dsh", "cancel_dsh"]));
    const submit = tools.find((t) => t.name === "submit_dsh")!;
    expect(submit.description).toContain("never send PHI or real personal data");
    expect(submit.description).toContain("MiMo/Xiaomi models are always refused");
    expect(JSON.stringify(submit.inputSchema)).toContain('"required":["task","model"]');
  });

  test("dl status shows the launcher, the models file with its problems, and dsh jobs", async () => {
    const r = await runDl(["status", "--json"], {
      DELEGATE_DSH_LAUNCHER: LAUNCHER,
      DELEGATE_DSH_MODELS_FILE: f.modelsFile,
      DELEGATE_DSH_STATE_DIR: join(f.root, "state-main"),
    });
    const report = JSON.parse(r.stdout) as {
      dsh: {
        launcher: { ok: boolean; path: string };
        models_file: { path: string; enabled: string[]; problems: string[] };
      };
      jobs: { provider: string }[];
    };
    expect(report.dsh.launcher).toEqual({ ok: true, path: LAUNCHER });
    expect(report.dsh.models_file.path).toBe(f.modelsFile);
    expect(report.dsh.models_file.enabled).toEqual(["ds-flash"]);
    expect(report.dsh.models_file.problems.join("\n")).toContain("mimo-v2 is enabled but refused");
    expect(report.jobs.map((j) => j.provider)).toContain("dsh");
    const text = await runDl(["status"], {
      DELEGATE_DSH_LAUNCHER: "nope-dsh",
      DELEGATE_DSH_MODELS_FILE: join(f.root, "x.json"),
    });
    expect(text.stdout).toContain("the dsh launcher (nope-dsh) was not found on PATH");
    expect(text.stdout).toContain("every dsh model is refused");
  });
});
