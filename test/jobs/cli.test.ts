import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { selfOwner } from "../../src/jobs/engine/machine.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { NewJob } from "../../src/store/types.ts";
import { requireBinary, tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";

// State must sit under the preload's isolation root, or config refuses to start.
const base = tempDir("cli");
const stateDir = join(base, "codex-state");
afterAll(() => rmSync(base, { recursive: true, force: true }));

const row = (id: string, over: Partial<NewJob> = {}): NewJob => ({
  id,
  provider: "codex",
  project: "/p",
  workdir: "/p",
  workspace_root: "/p",
  task: "t",
  created_at: Date.now() - 5000,
  ...over,
});

beforeAll(async () => {
  const s = JobStore.open(stateDir);
  const me = selfOwner();
  const dead = Bun.spawn(["true"]);
  await dead.exited;
  s.insertMany([
    // These two ran before they ended (a job ends from running: store/transitions.ts).
    row("cx-00000000d0", { status: "running", owner_pid: me.pid, owner_start: me.startTime }),
    row("cx-00000000fa", { status: "running", owner_pid: me.pid, owner_start: me.startTime }),
    row("cx-0000000e00", { status: "running", owner_pid: me.pid, owner_start: me.startTime, server_id: "srv-me" }),
    row("cx-00000000a0", {
      status: "queued",
      ...{ owner_pid: dead.pid, owner_start: "0@gone", server_id: "srv-dead" },
      ...{ origin_pid: dead.pid, origin_start: "0@gone", origin_id: "srv-dead" },
    }),
  ]);
  s.update("cx-00000000d0", {
    status: "done",
    exit_code: 0,
    started_at: Date.now() - 3000,
    ended_at: Date.now(),
    final_response: "all \u001b[31mgood\u202e",
  });
  s.update("cx-00000000fa", { status: "failed", exit_code: 2, failure_kind: "other", ended_at: Date.now() });
  s.close();
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return cliWith({}, ...args);
}

async function cliWith(env: Record<string, string>, ...args: string[]) {
  const p = Bun.spawn([requireBinary(), ...args], {
    env: { ...process.env, DELEGATE_CODEX_STATE_DIR: stateDir, DELEGATE_WAIT_INTERVAL: "5", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

describe("dl wait / dl reap commands", () => {
  test("wait: 0 done, 1 failed, 3 timeout; lines are sanitized", async () => {
    const ok = await cli("wait", "cx-00000000d0");
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^cx-00000000d0 DONE exit=0 3(\.\d)?s — all good\n$/);
    const bad = await cli("wait", "--json", "cx-00000000d0", "cx-00000000fa");
    expect(bad.code).toBe(1);
    expect(
      bad.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).status),
    ).toEqual(["done", "failed"]);
    const slow = await cli("wait", "--timeout", "0.3", "cx-0000000e00");
    expect(slow.code).toBe(3);
    expect(slow.err).toContain("cx-0000000e00");
    const usage = await cli("wait", "--timeout", "soon", "cx-00000000d0");
    expect(usage.code).toBe(2);
  });

  test("reap --dry-run reports without changing; reap hands the dead server's queued job to a supervisor", async () => {
    const dry = await cli("reap", "--dry-run", "--json");
    expect(dry.code).toBe(0);
    const report = JSON.parse(dry.out) as {
      providers: { provider: string; reaped: { id: string; status: string; reason: string }[] }[];
    };
    expect(report.providers.find((p) => p.provider === "codex")?.reaped).toEqual([
      expect.objectContaining({ id: "cx-00000000a0", status: "queued" }),
    ]);
    expect(dry.out).toContain("would hand it to a supervisor of its own");
    let s = JobStore.open(stateDir);
    expect(s.get("cx-00000000a0")?.status).toBe("queued");
    const dead = s.get("cx-00000000a0")!.owner_pid!;
    s.close();
    // An agent job too: its engine admits at once (Codex's waits for its version check).
    const agentDir = join(base, "agent-state");
    const a = JobStore.open(agentDir, { provider: "agent" });
    const gone = (pid: number) => ({ owner_pid: pid, owner_start: "0@gone", server_id: "srv-dead" });
    a.insertMany([
      {
        ...row("ag-00000000a1", { status: "queued", ...gone(dead) }),
        ...{ provider: "agent", origin_pid: dead, origin_start: "0@gone", origin_id: "srv-dead" },
      },
    ]);
    a.close();
    // The reference's way: their supervisors end them before they start, as their window's server would have.
    const real = await cliWith({ DELEGATE_JOBS_DIE_WITH_SERVER: "1", DELEGATE_AGENT_STATE_DIR: agentDir }, "reap");
    expect(real.code).toBe(0);
    expect(real.out).toContain("cx-00000000a0 → queued");
    expect(real.out).toContain("ag-00000000a1 → queued");
    expect(real.out).toContain("handed 1 queued one(s) to supervisors");
    for (const [dir, id] of [
      [stateDir, "cx-00000000a0"],
      [agentDir, "ag-00000000a1"],
    ] as const) {
      const ended = await until(() => {
        const st = JobStore.open(dir, { readonly: true });
        try {
          const r = st.get(id);
          return r?.status === "queued" ? null : r;
        } finally {
          st.close();
        }
      }, `the supervisor of ${id} to end it`);
      expect(ended).toMatchObject({ status: "cancelled", failure_kind: "server_stopped", started_at: null });
    }
    s = JobStore.open(stateDir);
    expect(s.get("cx-0000000e00")?.status).toBe("running"); // live owner: untouched
    s.close();
  });

  test("a handed-over job whose supervisor cannot run its provider is recorded failed with why, not left queued", async () => {
    // The window's registration allowed Gemini; the shell that reaps does not.
    const geminiDir = join(base, "gemini-state");
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    const gone = { owner_pid: dead.pid, owner_start: "0@gone", server_id: "srv-dead" };
    const g = JobStore.open(geminiDir, { provider: "gemini" });
    g.insertMany([{ ...row("gm-00000000b0", { status: "queued", ...gone }), provider: "gemini" }]);
    g.close();
    const reap = await cliWith({ DELEGATE_GEMINI_STATE_DIR: geminiDir }, "reap");
    expect(reap.code).toBe(0);
    expect(reap.out).toContain("gm-00000000b0 → queued");
    const ended = await until(() => {
      const st = JobStore.open(geminiDir, { readonly: true });
      try {
        const r = st.get("gm-00000000b0");
        return r?.status === "queued" ? null : r;
      } finally {
        st.close();
      }
    }, "the supervisor to record why it cannot run the job");
    expect(ended).toMatchObject({ status: "failed", failure_kind: "gemini_not_allowed", started_at: null });
    expect(ended!.final_response).toContain("DELEGATE_GEMINI_ALLOW_DANGER");
  });
});
