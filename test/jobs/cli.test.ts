import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { selfOwner } from "../../src/jobs/engine/machine.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { NewJob } from "../../src/store/types.ts";
import { requireBinary, tempDir } from "../helpers/dl.ts";

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
    row("cx-00000000a0", { status: "queued", owner_pid: dead.pid, owner_start: "0@gone", server_id: "srv-dead" }),
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
  const p = Bun.spawn([requireBinary(), ...args], {
    env: { ...process.env, DELEGATE_CODEX_STATE_DIR: stateDir, DELEGATE_WAIT_INTERVAL: "5" },
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

  test("reap --dry-run reports without changing; reap ends the dead server's rows", async () => {
    const dry = await cli("reap", "--dry-run", "--json");
    expect(dry.code).toBe(0);
    const report = JSON.parse(dry.out) as {
      providers: { provider: string; reaped: { id: string; status: string }[] }[];
    };
    expect(report.providers.find((p) => p.provider === "codex")?.reaped).toEqual([
      expect.objectContaining({ id: "cx-00000000a0", status: "lost" }),
    ]);
    let s = JobStore.open(stateDir);
    expect(s.get("cx-00000000a0")?.status).toBe("queued");
    s.close();
    const real = await cli("reap");
    expect(real.code).toBe(0);
    expect(real.out).toContain("cx-00000000a0 → lost");
    s = JobStore.open(stateDir);
    expect(s.get("cx-00000000a0")?.status).toBe("lost");
    expect(s.get("cx-0000000e00")?.status).toBe("running"); // live owner: untouched
    s.close();
  });
});
