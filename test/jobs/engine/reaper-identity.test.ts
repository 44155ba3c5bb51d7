import { afterAll, describe, expect, test } from "bun:test";
import { reapDeadOwners } from "../../../src/jobs/engine/reaper.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import type { ProcessIdentity } from "../../../src/sys/identity.ts";
import { tempFolder } from "../../helpers/dl.ts";

/**
 * The reaper's identity checks with a scripted process table: a pid alone never proves
 * who owns a row or who a child is, since pids are reused.
 */
const root = tempFolder("dl-reaper-id");
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
      const ids = table([{ pid: 4242, startTime: "555@boot", command: "bash", pgid: 4242, sid: 4242 }]);
      const actions = await reapDeadOwners(s, { identities: ids, now: () => 2, dryRun: true });
      expect(actions.map((a) => a.id)).toEqual(["j1"]);
    } finally {
      s.close();
    }
  });

  test("the same owner (same pid and start time) is alive: nothing is reaped", async () => {
    const s = storeWithRunningRow(`${root.dir}/b`);
    try {
      const ids = table([{ pid: 4242, startTime: "100@boot", command: "dl serve", pgid: 4242, sid: 4242 }]);
      expect(await reapDeadOwners(s, { identities: ids, now: () => 2, dryRun: true })).toEqual([]);
    } finally {
      s.close();
    }
  });

  test("a child pid worn by another process (other start time, or no longer its own group's and session's leader) is never signalled: lost", async () => {
    const s = storeWithRunningRow(`${root.dir}/c`);
    try {
      const pid = 999_999_991;
      for (const child of [
        { pid, startTime: "777@boot", command: "codex exec", pgid: pid, sid: pid },
        { pid, startTime: "200@boot", command: "codex exec", pgid: 1234, sid: pid },
        { pid, startTime: "200@boot", command: "codex exec", pgid: pid, sid: 1234 },
      ]) {
        const actions = await reapDeadOwners(s, { identities: table([child]), now: () => 2, dryRun: true });
        expect(actions).toMatchObject([{ id: "j1", status: "lost", killed_pid: null }]);
      }
      // The command line may differ (npm's `/usr/bin/env node …` became `node …`): pid,
      // start time and leadership of the group and session dl made are what count.
      const same = table([{ pid, startTime: "200@boot", command: "node codex.js exec", pgid: pid, sid: pid }]);
      const actions = await reapDeadOwners(s, { identities: same, now: () => 2, dryRun: true });
      expect(actions).toMatchObject([{ id: "j1", status: "killed_on_restart", killed_pid: pid }]);
    } finally {
      s.close();
    }
  });
});
