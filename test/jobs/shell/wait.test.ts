import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JobEngine } from "../../../src/jobs/engine/engine.ts";
import { selfOwner, sysIdentities } from "../../../src/jobs/engine/machine.ts";
import { type WaitOptions, waitForJobs } from "../../../src/jobs/shell/wait.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import { testTask } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { makeRepo, startEngine } from "../helpers.ts";

const root = tempFolder("dl-wait");
const home = join(root.dir, "home");
mkdirSync(home);
const stateDir = join(root.dir, "state");
let engine: JobEngine;
let trees: string[];
beforeAll(async () => {
  trees = makeRepo(root.dir, "w", 4).trees;
  engine = await startEngine(stateDir, home, { maxConcurrent: 8, maxPerProject: 8 });
});
afterAll(async () => {
  await engine.stop();
  root.cleanup();
});

function waitOpts(
  ids: string[],
  over: Partial<WaitOptions> = {},
): { opts: WaitOptions; lines: { at: number; line: string }[] } {
  const lines: { at: number; line: string }[] = [];
  return {
    lines,
    opts: {
      ids,
      all: false,
      json: false,
      intervalMs: 5000,
      sources: [
        { provider: "test", stateDir },
        { provider: "other", stateDir: join(root.dir, "never-created") },
      ],
      identities: sysIdentities,
      write: (line) => lines.push({ at: Date.now(), line }),
      ...over,
    },
  };
}

const submit = async (tree: number, spec: Parameters<typeof testTask>[1], timeout = 60) =>
  (await engine.submit([testTask(trees[tree]!, spec, timeout)])).jobs[0]!.id;

describe("dl wait (engine level)", () => {
  test("exit 0 when every job is done; one line per job as it ends", async () => {
    // b ends only once a's line is out (its gate opens then): a wait that batched its lines
    // until every job ended would never end. Streamed by construction, not by a delay.
    const gate = join(root.dir, "gate-streamed");
    const a = await submit(0, { mode: "ok", ms: 50 });
    const b = await submit(1, { mode: "ok", ms: 0, gate });
    const { opts, lines } = waitOpts([b, a]);
    const write = opts.write;
    opts.write = (line) => {
      write(line);
      if (line.startsWith(`${a} `)) writeFileSync(gate, "");
    };
    const r = await waitForJobs(opts);
    expect(r.code).toBe(0);
    expect(lines.map((l) => l.line.split(" ")[0])).toEqual([a, b]);
    expect(lines[0]!.line).toMatch(new RegExp(`^${a} DONE exit=0 [0-9.]+s — session: sess-${a}`));
    expect(lines[1]!.at).toBeGreaterThanOrEqual(lines[0]!.at); // streamed, not batched
  });

  test("--all holds the lines until the last job ends; --json is one object per line", async () => {
    const a = await submit(0, { mode: "ok", ms: 20 });
    const b = await submit(1, { mode: "fail", ms: 250, exit: 4 });
    const { opts, lines } = waitOpts([a, b], { all: true, json: true });
    const r = await waitForJobs(opts);
    expect(r.code).toBe(1); // one unsuccessful end
    expect(lines).toHaveLength(2);
    expect(Math.abs(lines[1]!.at - lines[0]!.at)).toBeLessThan(50);
    const objs = lines.map((l) => JSON.parse(l.line));
    expect(objs.find((o) => o.id === b)).toMatchObject({ status: "failed", exit_code: 4, failure_kind: "other" });
    expect(objs.find((o) => o.id === a)).toMatchObject({ status: "done", exit_code: 0 });
  });

  test("exit 2 when an id never appears; exit 3 on the watcher timeout; the first deadline wins", async () => {
    const slow = await submit(2, { mode: "silent", ms: 60_000 }); // running throughout; cancelled at the end
    let w = waitOpts(["tj-doesnotexist"], { appearMs: 200 });
    let r = await waitForJobs(w.opts);
    expect(r.code).toBe(2);
    expect(w.lines[0]!.line).toContain("tj-doesnotexist MISSING");
    w = waitOpts([slow], { timeoutMs: 200 });
    r = await waitForJobs(w.opts);
    expect(r.code).toBe(3);
    expect(r.pending).toEqual([slow]);
    w = waitOpts([slow, "tj-missing2"], { timeoutMs: 150, appearMs: 30_000 });
    expect((await waitForJobs(w.opts)).code).toBe(3);
    w = waitOpts([slow, "tj-missing3"], { timeoutMs: 30_000, appearMs: 150 });
    expect((await waitForJobs(w.opts)).code).toBe(2);
    await engine.cancel(slow);
  });

  test("a job whose owner is dead ends at once as what reap will record (exit 1), saying why", async () => {
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const s = JobStore.open(stateDir);
    s.insertMany([
      {
        id: "tj-orphanrow",
        provider: "test",
        project: "/p",
        workdir: "/p",
        workspace_root: "/p",
        task: "{}",
        created_at: Date.now(),
        status: "running",
        owner_pid: dead.pid,
        owner_start: "1@x",
        server_id: "srv-dead",
      },
    ]);
    s.close();
    const { opts, lines } = waitOpts(["tj-orphanrow"]);
    const t0 = Date.now();
    const r = await waitForJobs(opts);
    expect(r.code).toBe(1);
    expect(lines[0]!.line).toStartWith("tj-orphanrow LOST");
    expect(lines[0]!.line).toContain("dl reap will record it lost");
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  test("a job whose row is pruned after it was seen ends the wait unsuccessfully (exit 1), saying so", async () => {
    const dir = join(root.dir, "state-pruned");
    const me = selfOwner();
    const s = JobStore.open(dir);
    for (const json of [false, true]) {
      s.insertMany([
        {
          id: "tj-prunedrow",
          provider: "test",
          project: "/p",
          workdir: "/p",
          workspace_root: "/p",
          task: "{}",
          created_at: Date.now(),
          status: "running",
          owner_pid: me.pid,
          owner_start: me.startTime,
          server_id: "srv-live",
        },
      ]);
      const { opts, lines } = waitOpts(["tj-prunedrow"], {
        json,
        timeoutMs: 5000,
        sources: [{ provider: "test", stateDir: dir }],
      });
      const waiting = waitForJobs(opts); // its first pass runs now and sees the row running
      // `dl reap` prunes it, without the waiter ever seeing its end.
      s.update("tj-prunedrow", { status: "done", ended_at: 1 });
      expect(s.pruneFinished(2)).toHaveLength(1);
      const r = await waiting;
      expect(r.code).toBe(1);
      expect(lines).toHaveLength(1);
      if (json) expect(JSON.parse(lines[0]!.line)).toMatchObject({ id: "tj-prunedrow", status: "pruned" });
      else expect(lines[0]!.line).toStartWith("tj-prunedrow PRUNED");
    }
    s.close();
  });

  test("hostile output gives a clean, capped line", async () => {
    const id = await submit(3, { mode: "hostile" });
    for (const json of [false, true]) {
      const { opts, lines } = waitOpts([id], { json });
      await waitForJobs(opts);
      const line = lines[0]!.line;
      expect(line).not.toMatch(/[\x00-\x1f\x7f\u202e\u2028\u2029]/);
      expect(line.length).toBeLessThanOrEqual(json ? 4000 : 256);
    }
  });

  test("wakes within 200 ms of a job's end (median of 20) while the interval is 5 s", async () => {
    const lat: number[] = [];
    for (let i = 0; i < 20; i++) {
      const id = await submit(i % 4, { mode: "ok", ms: 30 });
      const { opts, lines } = waitOpts([id]);
      await waitForJobs(opts);
      const ended = engine.row(id)!.ended_at!;
      lat.push(lines[0]!.at - ended);
    }
    lat.sort((x, y) => x - y);
    const median = lat[10]!;
    console.log(`dl wait wake latency: median ${median} ms, max ${lat[19]} ms (interval 5000 ms)`);
    expect(median).toBeLessThan(200);
  });
});
