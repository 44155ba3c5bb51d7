import { afterAll, describe, expect, test } from "bun:test";
import { reapDeadOwners } from "../../src/jobs/reaper.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { ProcessIdentity } from "../../src/sys/identity.ts";
import { tempRoot } from "./helpers.ts";

/**
 * The reaper's identity checks with a scripted process table: a pid alone never proves
 * who owns a row or who a child is, since pids are reused.
 */
const root = tempRoot("dl-reaper-id-");
afterAll(root.cleanup);

const table = (procs: ProcessIdentity[]) => ({
  read: (pid: number) => procs.find((p) => p.pid === pid) ?? null,
});

function storeWithRunningRow(dir: string): JobStore {
  const s = JobStore.open(dir);
  s.insertMany([
    { id: "j1", provider: "test", project: "p", workdir: "/w", workspace_root: "/w", task: "t", created_at: 1 },
  ]);
  s.update("j1", {
    status: "running",
    server_id: "srv-a",
    owner_pid: 4242,
    owner_start: "100@boot",
    child_pid: 999_999_991,
    child_pgid: 999_999_991,
    child_start: "200@boot",
    child_cmd: "codex exec",
  } as never);
  return s;
}

describe("reaper identity checks", () => {
  test("an owner pid now worn by another process (other start time) is dead: its row is reaped", async () => {
    const s = storeWithRunningRow(`${root.dir}/a`);
    try {
      const ids = table([{ pid: 4242, startTime: "555@boot", command: "bash" }]);
      const actions = await reapDeadOwners(s, { identities: ids, now: () => 2, dryRun: true });
      expect(actions.map((a) => a.id)).toEqual(["j1"]);
    } finally {
      s.close();
    }
  });

  test("the same owner (same pid and start time) is alive: nothing is reaped", async () => {
    const s = storeWithRunningRow(`${root.dir}/b`);
    try {
      const ids = table([{ pid: 4242, startTime: "100@boot", command: "dl serve" }]);
      expect(await reapDeadOwners(s, { identities: ids, now: () => 2, dryRun: true })).toEqual([]);
    } finally {
      s.close();
    }
  });

  test("a child pid reused by another command is never signalled: the row becomes lost", async () => {
    const s = storeWithRunningRow(`${root.dir}/c`);
    try {
      for (const child of [
        { pid: 999_999_991, startTime: "200@boot", command: "vim notes.txt" },
        { pid: 999_999_991, startTime: "777@boot", command: "codex exec" },
      ]) {
        const actions = await reapDeadOwners(s, { identities: table([child]), now: () => 2, dryRun: true });
        expect(actions).toMatchObject([{ id: "j1", status: "lost", killed_pid: null }]);
      }
      const same = table([{ pid: 999_999_991, startTime: "200@boot", command: "codex exec" }]);
      const actions = await reapDeadOwners(s, { identities: same, now: () => 2, dryRun: true });
      expect(actions).toMatchObject([{ id: "j1", status: "killed_on_restart", killed_pid: 999_999_991 }]);
    } finally {
      s.close();
    }
  });
});
