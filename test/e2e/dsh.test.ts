import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { callTool, connectDl, type DlSession, requireBinary, runDl, tempDir, testEnv } from "../helpers/dl.ts";
import { connectInProcess, type InProcessSession } from "../helpers/in-process.ts";
import { liveWith, pidAlive } from "../helpers/proc.ts";
import { supervisorOf } from "../helpers/supervisor.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * dsh launcher jobs through the product: the compiled `dl serve`, the SDK's Client, the
 * fake launcher (test/fixture/fake-dsh.sh, same flags and result.json as the real one)
 * and `dl wait` as the completion signal. The fake appends "start <out-dir> <pid>" and
 * "end <out-dir>" to an EVENTS file, so concurrency is measured by the launchers
 * themselves, not sampled.
 */
const LAUNCHER = join(import.meta.dir, "..", "fixture", "fake-dsh.sh");

type JobView = {
  id: string;
  status: string;
  workdir: string;
  final_response: string | null;
  failure_kind: string | null;
  out_dir: string | null;
  diff_stat: string | null;
  tokens: unknown;
  wall_s: number | null;
  owner: { pid: number | null; alive: boolean };
  orphan_killed?: true;
};
type Submitted = { jobs: { id: string; warnings: string[] }[]; watch: string; watch_hint: string };

let root: string;
let modelsFile: string;
const sessions: (DlSession | InProcessSession)[] = [];

beforeAll(() => {
  requireBinary();
  root = tempDir("dsh-e2e");
  modelsFile = join(root, "dsh-models.json");
  writeFileSync(
    modelsFile,
    JSON.stringify({
      models: {
        "ds-flash": { model: "deepseek-v4-flash", enabled: true },
        "ds-off": { model: "deepseek-v4-pro", enabled: false },
        "mimo-v2": { model: "xiaomi/mimo-v2", enabled: true },
      },
    }),
  );
});
// A test's servers end with it: an idle server still ticks its engines.
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});

/**
 * A server on `stateDir` with the fake launcher and the models file; caps as given. A
 * launcher that ignores SIGTERM gets its SIGKILL after 0.5 s (DELEGATE_JOB_KILL_GRACE),
 * not 5: the same kill, sooner.
 */
async function serve(stateDir: string, extra: Record<string, string> = {}): Promise<DlSession> {
  const s = await connectDl(serverEnv(stateDir, extra));
  sessions.push(s);
  return s;
}

/** The settings every server of this file runs with. */
function serverEnv(stateDir: string, extra: Record<string, string>): Record<string, string> {
  return {
    DELEGATE_DSH_LAUNCHER: LAUNCHER,
    DELEGATE_DSH_STATE_DIR: stateDir,
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_DSH_STAGGER_S: "0.05",
    DELEGATE_JOB_KILL_GRACE: "0.5",
    ...extra,
  };
}

/**
 * `serve`'s set-up in this process (helpers/in-process.ts): for the tests of what a
 * tool answers (refusals, the tool list), which start no launcher.
 */
async function serveInProcess(stateDir: string, extra: Record<string, string> = {}): Promise<InProcessSession> {
  const s = await connectInProcess(serverEnv(stateDir, extra));
  sessions.push(s);
  return s;
}

const call = callTool;

/** The fake's directives, then the task text. */
function task(workdir: string, d: { mode?: string; ms?: number; events?: string }, extra: object = {}) {
  const lines = [`MODE: ${d.mode ?? "ok"}`, `MS: ${d.ms ?? 50}`];
  if (d.events) lines.push(`EVENTS: ${d.events}`);
  return { task: `${lines.join("\n")}\nDo the task.`, model: "ds-flash", workdir, ...extra };
}

/** `out`: the job's out-dir, in the launcher's argv (how a test finds it on the host: as root it sees its own pid namespace, so `pid` is that namespace's). */
type Event = { kind: "start" | "end"; id: string; out: string; pid?: number };
function events(file: string): Event[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [kind, out, pid] = l.split(" ");
      const id = /\/jobs\/(dsh-[0-9a-f]+)\/out$/.exec(out!)?.[1] ?? "?";
      return { kind: kind as Event["kind"], id, out: out!, pid: pid ? Number(pid) : undefined };
    });
}

/** The most launchers alive at once, overall and within each group `groupOf` names. */
function peaks(evs: Event[], groupOf: (id: string) => string = () => "all"): { all: number; group: number } {
  const live = new Set<string>();
  let all = 0;
  let group = 0;
  for (const e of evs) {
    if (e.kind === "start") live.add(e.id);
    else live.delete(e.id);
    all = Math.max(all, live.size);
    const counts = new Map<string, number>();
    for (const id of live) counts.set(groupOf(id), (counts.get(groupOf(id)) ?? 0) + 1);
    group = Math.max(group, ...counts.values(), 0);
  }
  return { all, group };
}

async function pollUntilEnded(s: DlSession, ids: string[], ms = 60_000): Promise<JobView[]> {
  return until(
    async () => {
      const jobs = (await call<{ jobs: JobView[] }>(s, "poll_dsh", { ids })).data.jobs;
      return jobs.every((j) => !["queued", "running"].includes(j.status)) ? jobs : null;
    },
    `jobs ${ids.join(" ")} to end`,
    ms,
  );
}

describe("dsh jobs through dist/dl serve with the fake launcher", () => {
  test("4 tasks over 2 worktrees: never more than 2 at once, all done with out_dir and diff_stat, watch exits 0", async () => {
    const stateDir = join(root, "state-main");
    const log = join(root, "events-main.log");
    const s = await serve(stateDir);
    const { trees } = makeRepo(root, "main", 2);
    // Long enough that the second launch starts before the first ends even on a loaded
    // machine (the suite runs files in parallel): the peak of 2 shows both slots in use.
    const tasks = [0, 1, 2, 3].map((i) => task(trees[1 + (i % 2)]!, { ms: 2000, events: log }));
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
    const stateDir = join(root, "state-allow");
    const log = join(root, "events-allow.log");
    const s = await serveInProcess(stateDir);
    const repo = makeRepo(root, "allow", 0).repo;
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

    const noFile = await serveInProcess(join(root, "state-nofile"), {
      DELEGATE_DSH_MODELS_FILE: join(root, "nope.json"),
    });
    const r = await call(noFile, "submit_dsh", { tasks: [good] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`the models file ${join(root, "nope.json")} does not exist`);
    expect(r.text).toContain("DELEGATE_DSH_MODELS_FILE");
  });

  test("workdir defaults to the server's directory; $HOME is refused", async () => {
    const s = await serve(join(root, "state-wd"));
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
    const s = await serve(join(root, "state-fail"), {
      DELEGATE_DSH_MAX_CONCURRENT: "4",
      DELEGATE_DSH_MAX_PER_PROJECT: "4",
    });
    const modes = ["fail", "malformed", "missing", "crash"];
    const tasks = modes.map((mode) => task(makeRepo(root, `fail-${mode}`, 0).repo, { mode }));
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
    const log = join(root, "events-timeout.log");
    const s = await serve(join(root, "state-timeout"));
    const sub = await call<Submitted>(s, "submit_dsh", {
      tasks: [task(makeRepo(root, "timeout", 0).repo, { mode: "hang", events: log }, { timeout_s: 1 })],
    });
    const [job] = await pollUntilEnded(s, [sub.data.jobs[0]!.id], 30_000);
    expect(job!.status).toBe("timeout");
    expect(liveWith(events(log)[0]!.out)).toEqual([]);
  });

  test("cancel_dsh: a queued job is dequeued, a running one's group is killed", async () => {
    const log = join(root, "events-cancel.log");
    const s = await serve(join(root, "state-cancel"), {
      DELEGATE_DSH_MAX_CONCURRENT: "1",
      DELEGATE_DSH_MAX_PER_PROJECT: "1",
    });
    const tasks = [0, 1].map((i) => task(makeRepo(root, `cancel-${i}`, 0).repo, { mode: "hang", events: log }));
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
    const s = await serveInProcess(join(root, "state-nolauncher"), { DELEGATE_DSH_LAUNCHER: "no-such-dsh-herdr.sh" });
    const r = await call(s, "submit_dsh", { tasks: [task(makeRepo(root, "nolauncher", 0).repo, {})] });
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
      DELEGATE_DSH_MODELS_FILE: modelsFile,
      DELEGATE_DSH_STATE_DIR: join(root, "state-main"),
    });
    const report = JSON.parse(r.stdout) as {
      dsh: {
        launcher: { ok: boolean; path: string };
        models_file: { path: string; enabled: string[]; problems: string[] };
      };
      jobs: { provider: string }[];
    };
    expect(report.dsh.launcher).toEqual({ ok: true, path: LAUNCHER });
    expect(report.dsh.models_file.path).toBe(modelsFile);
    expect(report.dsh.models_file.enabled).toEqual(["ds-flash"]);
    expect(report.dsh.models_file.problems.join("\n")).toContain("mimo-v2 is enabled but refused");
    expect(report.jobs.map((j) => j.provider)).toContain("dsh");
    const text = await runDl(["status"], {
      DELEGATE_DSH_LAUNCHER: "nope-dsh",
      DELEGATE_DSH_MODELS_FILE: join(root, "x.json"),
    });
    expect(text.stdout).toContain("the dsh launcher (nope-dsh) was not found on PATH");
    expect(text.stdout).toContain("every dsh model is refused");
  });
});

describe("dsh caps across servers", () => {
  test("2 servers on one state dir: cap 2 holds across both", async () => {
    const stateDir = join(root, "state-two");
    const log = join(root, "events-two.log");
    const a = await serve(stateDir);
    const b = await serve(stateDir);
    const repos = [0, 1, 2, 3, 4, 5].map((i) => makeRepo(root, `two-${i}`, 0).repo);
    const subs = await Promise.all(
      [a, b].map((s, k) =>
        call<Submitted>(s, "submit_dsh", {
          // Long enough to overlap: each job's supervisor starts on its own, slower on a loaded machine.
          tasks: repos.slice(k * 3, k * 3 + 3).map((r) => task(r, { ms: 1500, events: log })),
        }),
      ),
    );
    const ids = subs.flatMap((r) => r.data.jobs.map((j) => j.id));
    const jobs = await pollUntilEnded(a, ids);
    expect(jobs.map((j) => j.status)).toEqual(Array(6).fill("done"));
    const p = peaks(events(log));
    console.log(`dsh e2e: 6 jobs from 2 servers, peak launchers alive ${p.all} (cap 2)`);
    expect(p.all).toBe(2);
    // Each server shows the other's jobs read-only.
    const fromB = (await call<{ jobs: (JobView & { read_only?: true })[] }>(b, "poll_dsh", { ids: [ids[0]!] })).data;
    expect(fromB.jobs[0]!.read_only).toBe(true);
  });

  test("FIFO across 2 servers: with one slot, jobs start in the order they were submitted", async () => {
    const stateDir = join(root, "state-fifo");
    const log = join(root, "events-fifo.log");
    const one = { DELEGATE_DSH_MAX_CONCURRENT: "1", DELEGATE_DSH_MAX_PER_PROJECT: "1" };
    const a = await serve(stateDir, one);
    const b = await serve(stateDir, one);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const repo = makeRepo(root, `fifo-${i}`, 0).repo;
      const r = await call<Submitted>(i % 2 ? b : a, "submit_dsh", { tasks: [task(repo, { ms: 150, events: log })] });
      ids.push(r.data.jobs[0]!.id);
    }
    await pollUntilEnded(b, ids);
    const evs = events(log);
    expect(peaks(evs).all).toBe(1);
    expect(evs.filter((e) => e.kind === "start").map((e) => e.id)).toEqual(ids);
  });

  test("per-project cap with worktrees: 2 repos x 2 worktrees, per project 1, global 2", async () => {
    const log = join(root, "events-proj.log");
    const s = await serve(join(root, "state-proj"), { DELEGATE_DSH_MAX_PER_PROJECT: "1" });
    const p = makeRepo(root, "proj-p", 2).trees.slice(1);
    const q = makeRepo(root, "proj-q", 2).trees.slice(1);
    const trees = [p[0]!, p[1]!, q[0]!, q[1]!];
    // Long enough that a job of the other project starts while the first still runs, even on a loaded machine.
    const sub = await call<Submitted>(s, "submit_dsh", { tasks: trees.map((t) => task(t, { ms: 1500, events: log })) });
    const ids = sub.data.jobs.map((j) => j.id);
    const project = new Map(ids.map((id, i) => [id, i < 2 ? "p" : "q"]));
    await pollUntilEnded(s, ids);
    const pk = peaks(events(log), (id) => project.get(id)!);
    expect(pk.group).toBe(1);
    expect(pk.all).toBe(2);
  });

  test("a dead supervisor's running job ends (dl wait exits 1), the dead server's queued one waits; the next server kills the verified orphan and runs the queued one", async () => {
    const stateDir = join(root, "state-dead");
    const log = join(root, "events-dead.log");
    const s = await serve(stateDir, { DELEGATE_DSH_MAX_CONCURRENT: "1", DELEGATE_DSH_MAX_PER_PROJECT: "1" });
    const tasks = [0, 1].map((i) => task(makeRepo(root, `dead-${i}`, 0).repo, { mode: "hang", events: log }));
    const sub = await call<Submitted>(s, "submit_dsh", { tasks });
    const ids = sub.data.jobs.map((j) => j.id);
    await until(() => events(log).some((e) => e.kind === "start"), "the first job to start");
    const launcherOut = events(log)[0]!.out;
    // The server that queued both, and the supervisor of the running one.
    for (const pid of [s.transport.pid!, supervisorOf(stateDir, ids[0]!)]) {
      process.kill(pid, "SIGKILL");
      await until(() => !pidAlive(pid), `process ${pid} to die`);
    }
    // The launcher runs in its own session: it outlives its supervisor until reaped.
    expect(liveWith(launcherOut).length).toBeGreaterThan(0);

    const wait = await runDl(["wait", ids[0]!], { DELEGATE_DSH_STATE_DIR: stateDir });
    expect(wait.code).toBe(1);
    // One story: the running one's child still runs (reap will stop it), the queued one never started.
    expect(wait.stdout).toContain(`${ids[0]} KILLED_ON_RESTART`);
    expect(wait.stdout).toContain("dl reap will stop the child and record killed_on_restart");
    const shown = JSON.parse((await runDl(["show", "--json", ids[1]!], { DELEGATE_DSH_STATE_DIR: stateDir })).stdout);
    expect(shown).toMatchObject({ state: "queued", window: "closed" });
    expect(shown.reason).toContain("hand it to a supervisor of its own");

    // A new server on the state dir reaps them at start: the running one lost, its verified
    // orphan killed; the queued one, whose work never started, goes to a supervisor of its
    // own, which runs it (the window's work goes on).
    const next = await serve(stateDir);
    const [dead] = await pollUntilEnded(next, [ids[0]!]);
    expect(dead!.status).toBe("lost");
    expect(dead!.orphan_killed).toBe(true);
    await until(() => liveWith(launcherOut).length === 0, "the orphaned launcher to be killed");
    await until(async () => {
      const [j] = (await call<{ jobs: JobView[] }>(next, "poll_dsh", { ids: [ids[1]!] })).data.jobs;
      return j?.status === "running";
    }, "the dead server's queued job to run under a supervisor of its own");
    // It is another project's job to this server: end it as its own project would not here,
    // by its supervisor's death and a reap (which kills the hanging launcher).
    const supervisor = supervisorOf(stateDir, ids[1]!);
    process.kill(supervisor, "SIGKILL");
    await until(() => !pidAlive(supervisor), "the adopting supervisor to die");
    expect((await runDl(["reap"], { DELEGATE_DSH_STATE_DIR: stateDir })).code).toBe(0);
  });
});
