// Job engine benchmark (not a test): prints figures comparable run to run.
//   bun bench/jobs.ts [jobs=1000] [servers=4]
// 1. admissions per second: `jobs` instant jobs submitted across `servers` server
//    processes sharing one state dir (caps 8/8, no stagger);
// 2. poll p50/p99 with 10,000 rows in the store;
// 3. dl wait wake latency (median of 20) with the fallback interval at 5 s.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JobEngine } from "../src/jobs/engine/engine.ts";
import { flockJobLocks, selfOwner, sysIdentities } from "../src/jobs/engine/machine.ts";
import { waitForJobs } from "../src/jobs/shell/wait.ts";
import { JobStore } from "../src/store/jobs.ts";
import { testProvider, testTask } from "../test/fixture/jobs-provider.ts";
import { startServerProc } from "../test/jobs/server-proc.ts";

const JOBS = Number(process.argv[2] ?? 1000);
const SERVERS = Number(process.argv[3] ?? 4);
const CAP = 8;
const root = mkdtempSync(join(tmpdir(), "dl-bench-jobs-"));
const home = join(root, "home");
const stateDir = join(root, "state");
mkdirSync(home);
const dirs = Array.from({ length: 64 }, (_, i) => {
  const d = join(root, `ws${i}`);
  mkdirSync(d);
  return d;
});
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

const startServer = () =>
  startServerProc({
    stateDir,
    home,
    maxConcurrent: CAP,
    maxPerProject: CAP,
    maxQueue: JOBS * 2,
    staggerMs: 0,
    tickMs: 50,
  });

// 1. Admissions.
const servers = await Promise.all(Array.from({ length: SERVERS }, startServer));
const t0 = performance.now();
await Promise.all(
  servers.map(async (s, si) => {
    for (let b = 0; b < JOBS / SERVERS; b += 50) {
      const n = Math.min(50, JOBS / SERVERS - b);
      await s.call({
        op: "submit",
        tasks: Array.from({ length: n }, (_, k) =>
          testTask(dirs[(si * 16 + b + k) % dirs.length]!, { mode: "silent", ms: 0 }),
        ),
      });
    }
  }),
);
const submitMs = performance.now() - t0;
const store = JobStore.open(stateDir);
for (;;) {
  const active = store.listActive().length;
  if (active === 0) break;
  await Bun.sleep(50);
}
const totalMs = performance.now() - t0;
const rows = store.listRecent(JOBS);
const starts = rows.map((r) => r.started_at!).sort((a, b) => a - b);
const spanS = (starts.at(-1)! - starts[0]!) / 1000;
console.log(`admission: ${JOBS} instant jobs over ${SERVERS} servers, caps ${CAP}/${CAP}, no stagger`);
console.log(
  `  submit ${submitMs.toFixed(0)} ms; all ended after ${(totalMs / 1000).toFixed(2)} s; ${(JOBS / spanS).toFixed(0)} admissions/s (first→last start)`,
);
console.log(
  `  statuses: ${JSON.stringify(Object.fromEntries([...new Set(rows.map((r) => r.status))].map((s) => [s, rows.filter((r) => r.status === s).length])))}`,
);
await Promise.all(servers.map((s) => s.call({ op: "stop" }).catch(() => undefined)));

// 2. Poll with 10,000 rows.
const extra = 10_000 - rows.length;
const now = Date.now();
store.insertMany(
  Array.from({ length: extra }, (_, i) => ({
    id: `tj-fill${i}`,
    provider: "test",
    project: "/p",
    workdir: "/p",
    workspace_root: "/p",
    task: "{}",
    created_at: now,
    status: "done" as const,
  })),
);
store.close();
const { engine } = await JobEngine.start({
  provider: testProvider,
  stateDir,
  maxConcurrent: CAP,
  maxPerProject: CAP,
  maxQueue: 100,
  staggerMs: 0,
  guards: { home, protectedDirs: [stateDir], toolEnv: { PATH: "/usr/local/bin:/usr/bin:/bin" } },
  locks: flockJobLocks(stateDir),
  identities: sysIdentities,
  self: selfOwner(),
  tickMs: 250,
});
const ids = rows.map((r) => r.id);
const pollMs: number[] = [];
for (let i = 0; i < 2000; i++) {
  const pick = [ids[(i * 7) % ids.length]!, ids[(i * 13 + 1) % ids.length]!, `tj-fill${i % extra}`];
  const t = performance.now();
  engine.poll(pick);
  pollMs.push(performance.now() - t);
}
console.log(
  `poll (3 ids) with ${engine.list(20_000).length} rows: p50 ${pct(pollMs, 50).toFixed(3)} ms, p99 ${pct(pollMs, 99).toFixed(3)} ms`,
);

// 3. Wait wake latency.
const lat: number[] = [];
for (let i = 0; i < 20; i++) {
  const r = await engine.submit([testTask(dirs[i]!, { mode: "ok", ms: 20 })]);
  const id = r.jobs[0]!.id;
  let at = 0;
  await waitForJobs({
    ids: [id],
    all: false,
    json: false,
    intervalMs: 5000,
    sources: [{ provider: "test", stateDir }],
    identities: sysIdentities,
    write: () => (at = Date.now()),
  });
  lat.push(at - engine.row(id)!.ended_at!);
}
console.log(
  `dl wait wake latency (interval 5 s): median ${pct(lat, 50)} ms, p90 ${pct(lat, 90)} ms, max ${Math.max(...lat)} ms`,
);
await engine.stop();
rmSync(root, { recursive: true, force: true });
