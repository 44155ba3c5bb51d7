import { afterAll, expect, test } from "bun:test";
import { deadOwnerStatus } from "../../../src/jobs/engine/dead-owner.ts";
import { pollView } from "../../../src/jobs/engine/poll.ts";
import { reapDeadOwners } from "../../../src/jobs/engine/reaper.ts";
import { jobsSummary } from "../../../src/jobs/shell/maintenance.ts";
import { judgePending } from "../../../src/jobs/shell/wait.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import type { JobStatus } from "../../../src/store/types.ts";
import { tempFolder } from "../../helpers/dl.ts";

/**
 * A dead server's job reads the same in the poll, dl wait, dl status and the reap: a
 * running Gemini job (its jail died with the server) is killed_on_restart; a running one
 * of a provider whose child may have ended on its own is lost; a queued one, which never
 * started, stays queued and is handed to a supervisor of its own.
 */
const root = tempFolder("dl-dead-owner");
afterAll(root.cleanup);
const nobody = { read: () => null };

const CASES: [provider: string, status: JobStatus, reads: "killed_on_restart" | "lost"][] = [
  ["gemini", "running", "killed_on_restart"],
  ["codex", "running", "lost"],
  ["dsh", "running", "lost"],
  ["agent", "running", "lost"],
];

function storeWith(dir: string, provider: string, status: JobStatus): JobStore {
  const s = JobStore.open(dir, { provider });
  s.insertMany([{ id: "j1", provider, project: "p", workdir: "/w", workspace_root: "/w", task: "t", created_at: 1 }]);
  // The owner is gone and no child was recorded (or nothing of it is left): no kill.
  s.update("j1", { status, server_id: "srv-dead", owner_pid: 4242, owner_start: "100@boot", started_at: 2 } as never);
  return s;
}

for (const [provider, status, reads] of CASES) {
  test(`${provider} ${status} of a dead server reads ${reads} everywhere`, async () => {
    const dir = `${root.dir}/${provider}-${status}`;
    const s = storeWith(dir, provider, status);
    try {
      const row = s.get("j1")!;
      expect(deadOwnerStatus(row)).toBe(reads);
      expect(pollView(row, 10, false).status).toBe(reads);
      const waited = judgePending(["j1"], { rows: new Map([["j1", row]]), complete: true }, new Set(["j1"]), () => ({
        owner: false,
        child: null,
      }));
      expect(waited.ended).toMatchObject([{ id: "j1", status: reads }]);
      const summary = jobsSummary([{ provider, stateDir: dir }], nobody)[0]!;
      expect(summary.active).toMatchObject([{ id: "j1", status: reads, owner_alive: false }]);
      expect(s.get("j1")?.status).toBe(status); // reading recorded nothing
      const actions = await reapDeadOwners(s, { identities: nobody, now: () => 20 });
      expect(actions).toMatchObject([{ id: "j1", status: reads, killed_pid: null }]);
      expect(s.get("j1")?.status).toBe(reads);
    } finally {
      s.close();
    }
  });
}

test("a dead server's queued job reads queued everywhere; a reaper hands it over, or records it lost when it cannot", async () => {
  const dir = `${root.dir}/gemini-queued`;
  const s = storeWith(dir, "gemini", "queued");
  try {
    const row = s.get("j1")!;
    expect(pollView(row, 10, false).status).toBe("queued");
    const dead = () => ({ owner: false, child: null });
    const waited = judgePending(["j1"], { rows: new Map([["j1", row]]), complete: true }, new Set(["j1"]), dead);
    // dl wait does not end on it: it hands it over and waits on.
    expect(waited).toMatchObject({ ended: [], still: ["j1"], adrift: [{ id: "j1" }] });
    const summary = jobsSummary([{ provider: "gemini", stateDir: dir }], nobody)[0]!;
    expect(summary.active).toMatchObject([{ id: "j1", status: "queued", owner_alive: false, orphaned: true }]);
    expect(summary.active[0]!.reason).toContain("hand it to a supervisor of its own");

    const dry = await reapDeadOwners(s, { identities: nobody, now: () => 20, dryRun: true, adoptQueued: () => true });
    expect(dry).toMatchObject([{ id: "j1", status: "queued" }]);
    expect(dry[0]!.reason).toContain("would hand it to a supervisor");
    const handed: string[] = [];
    const adoptQueued = (r: { id: string }) => handed.push(r.id) > 0;
    const actions = await reapDeadOwners(s, { identities: nobody, now: () => 20, adoptQueued });
    expect(actions).toMatchObject([{ id: "j1", status: "queued", killed_pid: null }]);
    expect(handed).toEqual(["j1"]);
    expect(s.get("j1")?.status).toBe("queued");
    // A reaper that cannot start a supervisor (or whose start failed) records it lost, saying why.
    const failed = await reapDeadOwners(s, { identities: nobody, now: () => 20, adoptQueued: () => false });
    expect(failed).toMatchObject([{ id: "j1", status: "lost" }]);
    expect(failed[0]!.reason).toContain("no supervisor could be started for it");
    expect(s.get("j1")?.status).toBe("lost");
  } finally {
    s.close();
  }
});

test("a live owner's row keeps the status it has", () => {
  const s = storeWith(`${root.dir}/alive`, "gemini", "running");
  try {
    expect(pollView(s.get("j1")!, 10, true).status).toBe("running");
  } finally {
    s.close();
  }
});
