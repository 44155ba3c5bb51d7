import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type EngineOptions, JobEngine } from "../../src/jobs/engine/engine.ts";
import { flockJobLocks, selfOwner, sysIdentities } from "../../src/jobs/engine/machine.ts";
import type { RunOutput } from "../../src/jobs/engine/provider.ts";
import type { JobStore } from "../../src/store/jobs.ts";
import type { JobRow, NewJob } from "../../src/store/types.ts";
import { testProvider } from "../fixture/jobs-provider.ts";

const TOOL_ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };

function git(cwd: string, ...args: string[]): void {
  const r = Bun.spawnSync(["git", ...args], {
    cwd,
    env: {
      ...TOOL_ENV,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
}

/** A real repository with one commit, plus `worktrees` linked worktrees beside it. */
export function makeRepo(parent: string, name: string, worktrees = 0): { repo: string; trees: string[] } {
  const repo = join(parent, name);
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "README"), name); // written before git add runs (Bun.write would be a promise)
  git(repo, "add", "README");
  git(repo, "commit", "-q", "-m", "init");
  const trees = [repo];
  for (let i = 0; i < worktrees; i++) {
    const wt = join(parent, `${name}-wt${i}`);
    git(repo, "worktree", "add", "-q", "-b", `b${i}`, wt);
    trees.push(wt);
  }
  return { repo, trees };
}

function engineOptions(stateDir: string, home: string, over: Partial<EngineOptions> = {}): EngineOptions {
  return {
    provider: testProvider,
    stateDir,
    maxConcurrent: 4,
    maxPerProject: 2,
    maxQueue: 32,
    staggerMs: 0,
    guards: { home, protectedDirs: [stateDir], toolEnv: TOOL_ENV },
    locks: flockJobLocks(stateDir),
    identities: sysIdentities,
    self: selfOwner(),
    tickMs: 50,
    graceMs: 300,
    ...over,
  };
}

export async function startEngine(
  stateDir: string,
  home: string,
  over: Partial<EngineOptions> = {},
): Promise<JobEngine> {
  return (await JobEngine.start(engineOptions(stateDir, home, over))).engine;
}

/** A finished run as a provider reads it: exit 0, empty output, unless `over` says otherwise. */
export function runOutput(jobDir: string, over: Partial<RunOutput> = {}): RunOutput {
  return {
    exitCode: 0,
    signal: null,
    stdout: "",
    stderr: "",
    outputTruncated: false,
    durationMs: 10,
    jobDir,
    ...over,
  };
}

/** A Codex job row that `owner` (usually this test process) runs: `dl wait` on it waits for its end. */
export function liveCodexRow(id: string, owner: { pid: number; startTime: string }): NewJob {
  return {
    id,
    provider: "codex",
    project: "/p",
    workdir: "/p",
    workspace_root: "/p",
    task: "t",
    created_at: Date.now(),
    status: "running",
    owner_pid: owner.pid,
    owner_start: owner.startTime,
    server_id: "srv-test",
  };
}

/**
 * A running row of the test provider owned by this process, as the engine leaves it after
 * claimLaunch: what a runner test hands runJob.
 */
export function insertRunning(store: JobStore, id: string, workdir: string, task = "{}"): JobRow {
  const me = selfOwner();
  const now = Date.now();
  store.insertMany([
    {
      id,
      provider: "test",
      project: workdir,
      workdir,
      workspace_root: workdir,
      task,
      timeout_s: 60,
      created_at: now,
      owner_pid: me.pid,
      owner_start: me.startTime,
      server_id: "srv-test",
    },
  ]);
  store.update(id, { status: "running", started_at: now, last_activity_at: now }, ["queued"]);
  return store.get(id)!;
}

/**
 * True once the job's child has passed its start gate (sys/start-gate.ts) and runs its
 * command: jobs-child.sh appends "start <id>" to its events file first thing. A recorded
 * child_start is not enough for a test that kills the server next: the gated entry that
 * the row names exits with nothing run when its server dies before opening the gate,
 * which the next server rightly records `lost`, not `killed_on_restart`.
 */
export function childStarted(events: string, id: string): boolean {
  try {
    return readFileSync(events, "utf8").split("\n").includes(`start ${id}`);
  } catch {
    return false;
  }
}

export { pidAlive } from "../helpers/proc.ts";
export { until } from "../helpers/until.ts";
