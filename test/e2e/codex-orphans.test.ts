import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { JobStore } from "../../src/store/jobs.ts";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { codexServeEnv, markerRouter } from "../helpers/codex-home.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { groupMembers, killPid, pidAlive } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Orphans of the Codex CLI as npm installs it (`#!/usr/bin/env node`): the command line
 * dl records right after spawn (`/usr/bin/env node …`) is not what the live process
 * shows a moment later (`node …`). After a SIGKILL of the job's supervisor (the `dl`
 * that runs it: an orphan is a job whose supervisor died), both the next server start and
 * `dl reap` must still recognise the child and kill its whole group.
 */
let fake: FakeResponses;
let root: string;
let stateDir: string;
const sessions: DlSession[] = [];

function serveEnv(): Record<string, string> {
  return { ...codexServeEnv(root, fake.baseUrl, stateDir, { npm: true }), DELEGATE_CODEX_STAGGER_S: "0" };
}

beforeAll(() => {
  fake = startFakeResponses(markerRouter());
  root = tempDir("codex-orphans");
  stateDir = join(root, "codex-jobs");
});
afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => {});
  await fake?.stop();
});

function liveCommand(pid: number): string {
  const r = Bun.spawnSync(["ps", "-ww", "-o", "command=", "-p", String(pid)], { env: { PATH: "/bin:/usr/bin" } });
  return r.stdout.toString().trim();
}

/**
 * Starts a server, gives it a Codex job that hangs on the fake (a slow task that never
 * ends by itself), waits until the real CLI has sent its request, then SIGKILLs the
 * job's supervisor and the server. Returns the job and the orphaned group, still alive.
 */
async function orphanAJob(tag: string): Promise<{ id: string; pid: number; recorded: string }> {
  const session = await connectDl(serveEnv());
  sessions.push(session);
  const repo = makeRepo(root, tag, 0).repo;
  const sub = (await session.client.callTool({
    name: "submit_codex",
    arguments: { tasks: [{ task: `[hang:0:${tag}] wait for an answer`, workdir: repo }] },
  })) as { structuredContent?: { jobs: { id: string }[] } };
  const id = sub.structuredContent!.jobs[0]!.id;
  await until(
    () => fake.requests.some((r) => r.prompt.includes(tag)),
    `the real Codex of ${tag} to call the fake`,
    60_000,
  );
  const store = JobStore.open(stateDir);
  const row = store.get(id)!;
  store.close();
  expect(row.status).toBe("running");
  expect(row.child_pgid).toBe(row.child_pid!);
  const pid = row.child_pid!;
  // The premise: the pinned npm CLI is a node script; whatever was recorded at spawn, a
  // live member of the group now runs node. As root the leader is bwrap, which runs Codex
  // in a pid namespace of its own (src/sys/pid-namespace.ts); otherwise it is Codex itself.
  const asRoot = process.getuid?.() === 0;
  const live = liveCommand(pid);
  expect(live).toMatch(asRoot ? /(^|\/)bwrap --unshare-pid / : /(^|\/)node /);
  await until(() => groupMembers(pid).some((m) => /(^|\/)node /.test(liveCommand(m))), "codex to run node");
  const supervisor = row.owner_pid!;
  expect(supervisor).not.toBe(session.transport.pid);
  for (const dead of [supervisor, session.transport.pid!]) {
    killPid(dead, "SIGKILL");
    await until(() => !pidAlive(dead), `process ${dead} to die`);
  }
  expect(groupMembers(pid).length).toBeGreaterThan(0); // the orphan outlived its supervisor
  console.log(`orphan ${tag}: recorded "${row.child_cmd?.slice(0, 40)}…", live "${live.slice(0, 40)}…"`);
  return { id, pid, recorded: row.child_cmd ?? "" };
}

function statusOf(id: string): string | undefined {
  const store = JobStore.open(stateDir);
  try {
    return store.get(id)?.status;
  } finally {
    store.close();
  }
}

describe("orphans of the npm-installed Codex after a SIGKILL of their supervisor", () => {
  test("the next server start kills the orphan's whole group: killed_on_restart", async () => {
    const o = await orphanAJob("restart");
    const next = await connectDl(serveEnv());
    sessions.push(next);
    await until(() => statusOf(o.id) !== "running", "the next start to reap the row");
    expect(statusOf(o.id)).toBe("killed_on_restart");
    await until(() => groupMembers(o.pid).length === 0, "no process of the orphan's group left");
    await next.close();
  }, 120_000);

  test("dl reap kills the orphan's whole group: killed_on_restart", async () => {
    const o = await orphanAJob("reap");
    const r = await runDl(["reap", "--json"], { DELEGATE_CODEX_STATE_DIR: stateDir });
    expect(r.code).toBe(0);
    const codex = (
      JSON.parse(r.stdout) as { providers: { provider: string; reaped: { id: string; status: string }[] }[] }
    ).providers.find((p) => p.provider === "codex");
    expect(codex?.reaped).toContainEqual(expect.objectContaining({ id: o.id, status: "killed_on_restart" }));
    expect(statusOf(o.id)).toBe("killed_on_restart");
    await until(() => groupMembers(o.pid).length === 0, "no process of the orphan's group left");
  }, 120_000);
});
