import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { CHILD_SCRIPT, testTask } from "../fixture/jobs-provider.ts";
import { tempFolder } from "../helpers/dl.ts";
import { killPid } from "../helpers/proc.ts";
import { childStarted, makeRepo, pidAlive, until } from "./helpers.ts";
import { type ServerProc, startServerProc } from "./server-proc.ts";

const root = tempFolder("dl-servers");
const home = join(root.dir, "home");
const servers: ServerProc[] = [];
afterAll(async () => {
  for (const s of servers) s.proc.kill("SIGKILL");
  root.cleanup();
});

async function startServer(cfg: Record<string, unknown>): Promise<ServerProc> {
  const s = await startServerProc({ home, ...cfg });
  servers.push(s);
  return s;
}

/**
 * Jobs with a live child right now, read from /proc. A Set: the shell forks for command
 * substitution, and the fork carries the same argv for a moment.
 */
function liveChildren(): string[] {
  const ids = new Set<string>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv[1] !== CHILD_SCRIPT) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if ("ZX".includes(stat.slice(stat.lastIndexOf(")") + 2)[0]!)) continue;
      ids.add(argv[6]!);
    } catch {
      // exited while we looked
    }
  }
  return [...ids];
}

describe("several servers on one state dir", () => {
  test("3 servers, caps 4 global / 2 per project, 30 jobs over 3 projects: caps hold, FIFO kept", async () => {
    const stateDir = join(root.dir, "state-caps");
    const events = join(root.dir, "events.log");
    await Bun.write(events, "");
    const projects = [0, 1, 2].map((p) => makeRepo(root.dir, `p${p}`, 9));
    // Hold admission until all 30 are queued, so FIFO is tested under full contention.
    const holdFile = join(root.dir, "hold");
    await Bun.write(holdFile, "");
    const cfg = { stateDir, maxConcurrent: 4, maxPerProject: 2, staggerMs: 5, tickMs: 40, holdFile };
    const srv = await Promise.all([0, 1, 2].map(() => startServer(cfg)));
    const projectOf = new Map<string, number>();
    const order: string[] = [];
    for (let k = 0; k < 30; k++) {
      const p = k % 3;
      const tree = projects[p]!.trees[Math.floor(k / 3)]!;
      const ms = 120 + ((k * 37) % 5) * 40;
      const r = await srv[Math.floor(k / 3) % 3]!.call<{ jobs: { id: string }[] }>({
        op: "submit",
        tasks: [testTask(tree, { mode: "ok", ms, events })],
      });
      const id = r.jobs[0]!.id;
      projectOf.set(id, p);
      order.push(id);
    }
    const peak = { global: 0, project: [0, 0, 0] };
    const store = JobStore.open(stateDir);
    expect(store.listByStatus(["queued"])).toHaveLength(30);
    rmSync(holdFile);
    await until(
      () => {
        const live = liveChildren().filter((id) => projectOf.has(id));
        peak.global = Math.max(peak.global, live.length);
        for (let p = 0; p < 3; p++)
          peak.project[p] = Math.max(peak.project[p]!, live.filter((id) => projectOf.get(id) === p).length);
        return store.getMany(order).every((r) => r.status === "done");
      },
      "all 30 jobs to finish",
      60_000,
    );
    store.close();

    // Replay the children's own start/end log (one total order) for an exact picture.
    const log = readFileSync(events, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ") as [string, string]);
    const running = new Set<string>();
    const logPeak = { global: 0, project: [0, 0, 0] };
    const starts: string[] = [];
    for (const [what, id] of log) {
      if (what === "start") {
        running.add(id);
        starts.push(id);
      } else running.delete(id);
      logPeak.global = Math.max(logPeak.global, running.size);
      for (let p = 0; p < 3; p++)
        logPeak.project[p] = Math.max(logPeak.project[p]!, [...running].filter((x) => projectOf.get(x) === p).length);
    }
    console.log(
      `peak concurrency (sampled /proc): global ${peak.global}/4, per project ${peak.project.join(",")} (cap 2)`,
    );
    console.log(
      `peak concurrency (children's log): global ${logPeak.global}/4, per project ${logPeak.project.join(",")} (cap 2)`,
    );
    expect(starts).toHaveLength(30);
    expect(Math.max(peak.global, logPeak.global)).toBeLessThanOrEqual(4);
    expect(Math.max(...peak.project, ...logPeak.project)).toBeLessThanOrEqual(2);
    expect(logPeak.global).toBeGreaterThanOrEqual(3); // the caps were actually reached, not idle
    // Admission order from the store: claims are serialized and at least the 5 ms stagger
    // apart, so started_at orders them (the children's own "start" lines race each other).
    const check = JobStore.open(stateDir);
    const admitted = check
      .getMany(order)
      .sort((x, y) => x.started_at! - y.started_at!)
      .map((r) => r.id);
    check.close();
    // FIFO: within a project (caps the only reason to wait), admissions follow submit order.
    for (let p = 0; p < 3; p++) {
      expect(admitted.filter((id) => projectOf.get(id) === p)).toEqual(order.filter((id) => projectOf.get(id) === p));
    }
    // Globally a job may pass an older one only when that one's project was full; report
    // the largest number of older jobs any start passed.
    const startedSet = new Set<string>();
    let maxPassed = 0;
    for (const id of admitted) {
      maxPassed = Math.max(maxPassed, order.slice(0, order.indexOf(id)).filter((o) => !startedSet.has(o)).length);
      startedSet.add(id);
    }
    console.log(`largest number of older jobs passed by one start: ${maxPassed}`);
    await Promise.all(srv.map((s) => s.call({ op: "stop" })));
  }, 90_000);

  test("after SIGKILL of a server the next start kills exactly its verified orphans and marks the rest lost", async () => {
    const stateDir = join(root.dir, "state-kill");
    const { trees } = makeRepo(root.dir, "killproj", 3);
    const cfg = { stateDir, maxConcurrent: 3, maxPerProject: 3, tickMs: 40 };
    const events = join(root.dir, "kill.events");
    const a = await startServer(cfg);
    const sub = await a.call<{ jobs: { id: string }[] }>({
      op: "submit",
      tasks: [
        testTask(trees[0]!, { mode: "ignore_term", events }), // orphan, verified → killed_on_restart
        testTask(trees[1]!, { mode: "silent", ms: 60_000, events }), // orphan we kill ourselves → lost
        testTask(trees[2]!, { mode: "silent", ms: 60_000, events }), // child pid "reused" by another process → lost, not killed
        testTask(trees[3]!, { mode: "ok" }), // queued behind the cap → lost
      ],
    });
    const [orphan, gone, reused, queued] = sub.jobs.map((j) => j.id) as [string, string, string, string];
    const store = JobStore.open(stateDir);
    await until(() => [orphan, gone, reused].every((id) => childStarted(events, id)), "three children running");
    const pidOf = (id: string) => store.get(id)!.child_pid!;
    const orphanPid = pidOf(orphan);
    a.proc.kill("SIGKILL");
    await a.proc.exited;
    expect(pidAlive(orphanPid)).toBe(true); // children outlive a SIGKILLed server

    killPid(pidOf(gone), "SIGKILL", true);
    await until(() => !pidAlive(pidOf(gone)), "the second orphan to die");
    // Stand-in for pid reuse: the row now points at an unrelated live process.
    const stranger = Bun.spawn(["sleep", "30"], { stdout: "ignore" });
    killPid(pidOf(reused), "SIGKILL", true);
    store.update(reused, { child_pid: stranger.pid, child_pgid: stranger.pid });

    const b = await startServer(cfg);
    const byId = new Map(b.ready.reaped.map((r) => [r.id, r]));
    console.log(`reaped on restart: ${b.ready.reaped.map((r) => `${r.id}=${r.status}`).join(" ")}`);
    expect(byId.get(orphan)).toMatchObject({ status: "killed_on_restart", killed_pid: orphanPid });
    expect(byId.get(gone)).toMatchObject({ status: "lost", killed_pid: null });
    expect(byId.get(reused)).toMatchObject({ status: "lost", killed_pid: null });
    expect(byId.get(queued)).toMatchObject({ status: "lost" });
    expect(b.ready.reaped).toHaveLength(4);
    await until(() => !pidAlive(orphanPid), "the verified orphan to be dead");
    expect(pidAlive(stranger.pid)).toBe(true); // never signalled
    stranger.kill("SIGKILL");
    expect(store.getMany([orphan, gone, reused, queued]).map((r) => r.status)).toEqual([
      "killed_on_restart",
      "lost",
      "lost",
      "lost",
    ]);
    store.close();
    await b.call({ op: "stop" });
  }, 60_000);
});
