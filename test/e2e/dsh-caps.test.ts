import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { callTool, runDl } from "../helpers/dl.ts";
import {
  dshFile,
  events,
  type JobView,
  openGatesAfterStarts,
  peaks,
  pollUntilEnded,
  type Submitted,
  task,
} from "../helpers/dsh-jobs.ts";
import { liveWith, pidAlive } from "../helpers/proc.ts";
import { childRecorded, supervisorOf } from "../helpers/supervisor.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * dsh launcher jobs through the product (helpers/dsh-jobs.ts says how): the caps and the
 * queue order across servers on one state dir, and what a dead supervisor leaves. The
 * single-server tests are dsh.test.ts.
 */
const f = dshFile("dsh-caps-e2e");
const { serve } = f;
const call = callTool;

describe("dsh caps across servers", () => {
  test("2 servers on one state dir: cap 2 holds across both", async () => {
    const stateDir = join(f.root, "state-two");
    const log = join(f.root, "events-two.log");
    const a = await serve(stateDir);
    const b = await serve(stateDir);
    const repos = [0, 1, 2, 3, 4, 5].map((i) => makeRepo(f.root, `two-${i}`, 0).repo);
    const subs = await Promise.all(
      [a, b].map((s, k) =>
        call<Submitted>(s, "submit_dsh", {
          // Held until the test has seen two start: each job's supervisor starts on its own.
          tasks: repos.slice(k * 3, k * 3 + 3).map((r) => task(r, { events: log, await: "go" })),
        }),
      ),
    );
    const ids = subs.flatMap((r) => r.data.jobs.map((j) => j.id));
    await openGatesAfterStarts(log, 2, repos, "go");
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
    const stateDir = join(f.root, "state-fifo");
    const log = join(f.root, "events-fifo.log");
    const one = { DELEGATE_DSH_MAX_CONCURRENT: "1", DELEGATE_DSH_MAX_PER_PROJECT: "1" };
    const a = await serve(stateDir, one);
    const b = await serve(stateDir, one);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const repo = makeRepo(f.root, `fifo-${i}`, 0).repo;
      const r = await call<Submitted>(i % 2 ? b : a, "submit_dsh", { tasks: [task(repo, { ms: 150, events: log })] });
      ids.push(r.data.jobs[0]!.id);
    }
    await pollUntilEnded(b, ids);
    const evs = events(log);
    expect(peaks(evs).all).toBe(1);
    expect(evs.filter((e) => e.kind === "start").map((e) => e.id)).toEqual(ids);
  });

  test("per-project cap with worktrees: 2 repos x 2 worktrees, per project 1, global 2", async () => {
    const log = join(f.root, "events-proj.log");
    const s = await serve(join(f.root, "state-proj"), { DELEGATE_DSH_MAX_PER_PROJECT: "1" });
    const p = makeRepo(f.root, "proj-p", 2).trees.slice(1);
    const q = makeRepo(f.root, "proj-q", 2).trees.slice(1);
    const trees = [p[0]!, p[1]!, q[0]!, q[1]!];
    // Held until one job of each project has started, however slowly their supervisors start.
    const sub = await call<Submitted>(s, "submit_dsh", {
      tasks: trees.map((t) => task(t, { events: log, await: "go" })),
    });
    const ids = sub.data.jobs.map((j) => j.id);
    await openGatesAfterStarts(log, 2, trees, "go");
    const project = new Map(ids.map((id, i) => [id, i < 2 ? "p" : "q"]));
    await pollUntilEnded(s, ids);
    const pk = peaks(events(log), (id) => project.get(id)!);
    expect(pk.group).toBe(1);
    expect(pk.all).toBe(2);
  });

  test("a dead supervisor's running job ends (dl wait exits 1), the dead server's queued one waits; the next server kills the verified orphan and runs the queued one", async () => {
    const stateDir = join(f.root, "state-dead");
    const log = join(f.root, "events-dead.log");
    const s = await serve(stateDir, { DELEGATE_DSH_MAX_CONCURRENT: "1", DELEGATE_DSH_MAX_PER_PROJECT: "1" });
    const tasks = [0, 1].map((i) => task(makeRepo(f.root, `dead-${i}`, 0).repo, { mode: "hang", events: log }));
    const sub = await call<Submitted>(s, "submit_dsh", { tasks });
    const ids = sub.data.jobs.map((j) => j.id);
    await until(() => events(log).some((e) => e.kind === "start"), "the first job to start");
    const launcherOut = events(log)[0]!.out;
    await childRecorded(stateDir, ids[0]!);
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
