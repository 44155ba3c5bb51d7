import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { sysIdentities } from "../../../src/jobs/engine/machine.ts";
import { reapDeadOwners } from "../../../src/jobs/engine/reaper.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import { identity } from "../../../src/sys/identity.ts";
import { groupAlive, killGroup } from "../../../src/sys/process.ts";
import { tempDir } from "../../helpers/dl.ts";
import { until } from "../../helpers/until.ts";

/**
 * A job's child can exit while processes it started stay in its group: a jail's inner
 * process after the outer bwrap died with its server, a CLI's helper. The reaper stops
 * those survivors (the OS never hands out a group's number while the group has members,
 * so they are the group dl made), and it never signals a group that is gone.
 */
const root = tempDir("reap-survivors");
const groups: number[] = [];
afterAll(() => {
  for (const g of groups) killGroup(g, "SIGKILL");
});

async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

function insertRunning(store: JobStore, id: string, owner: number, child: { pid: number; start: string }): void {
  store.insertMany([
    {
      id,
      provider: "test",
      project: root,
      workdir: root,
      workspace_root: root,
      task: "t",
      created_at: Date.now(),
      status: "running",
      owner_pid: owner,
      owner_start: "1@gone",
      server_id: "srv-dead",
    },
  ]);
  store.update(id, { child_pid: child.pid, child_pgid: child.pid, child_start: child.start, child_cmd: "sh" }, [
    "running",
  ]);
}

test("a dead leader whose group lives on: the survivors are killed and the job ends killed_on_restart", async () => {
  const store = JobStore.open(join(root, "state-a"));
  // The leader (its own session and group, like a job's child) starts a sleeper in its
  // group, then exits when its stdin closes, leaving the sleeper behind.
  const leader = Bun.spawn(["setsid", "sh", "-c", "sleep 300 & read _line"], {
    stdin: "pipe",
    stdout: "ignore",
    stderr: "ignore",
  });
  groups.push(leader.pid);
  const ident = await until(() => {
    const i = identity(leader.pid);
    return i?.command.startsWith("sh -c") && groupAlive(leader.pid) ? i : null;
  }, "the leader to run");
  insertRunning(store, "t-surv", await deadPid(), { pid: leader.pid, start: ident.startTime });
  leader.stdin.end();
  await leader.exited;
  expect(groupAlive(leader.pid)).toBe(true); // the sleeper is still there

  const [action] = await reapDeadOwners(store, { identities: sysIdentities, now: Date.now, graceMs: 500 });
  expect(action).toMatchObject({ id: "t-surv", status: "killed_on_restart", killed_pid: leader.pid });
  expect(action!.reason).toContain("processes of its group");
  expect(action!.reason).toContain("they were stopped, recorded killed_on_restart");
  expect(groupAlive(leader.pid)).toBe(false);
  expect(store.get("t-surv")?.status).toBe("killed_on_restart");
  store.close();
});

test("a dead leader whose group is gone: lost, and nothing is signalled", async () => {
  const store = JobStore.open(join(root, "state-b"));
  const gone = Bun.spawn(["setsid", "true"]);
  await gone.exited;
  insertRunning(store, "t-gone", await deadPid(), { pid: gone.pid, start: "1@gone" });
  const signalled: number[] = [];
  const ids = {
    read: () => null,
    groupAlive: (g: number) => {
      signalled.push(g);
      return false;
    },
  };
  const [action] = await reapDeadOwners(store, { identities: ids, now: Date.now });
  expect(action).toMatchObject({ status: "lost", killed_pid: null });
  expect(signalled).toEqual([gone.pid]); // asked, not killed
  // Without a way to see groups, a gone leader is never taken for survivors.
  insertRunning(store, "t-blind", await deadPid(), { pid: gone.pid, start: "1@gone" });
  const [blind] = await reapDeadOwners(store, { identities: { read: () => null }, now: Date.now });
  expect(blind).toMatchObject({ id: "t-blind", status: "lost" });
  store.close();
});
