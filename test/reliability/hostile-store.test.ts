import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selfOwner } from "../../src/jobs/engine/machine.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { requireBinary, tempDir, testEnv } from "../helpers/dl.ts";
import { makeFifo } from "../helpers/fifo.ts";
import { hasStoreOpen } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";
import { liveCodexRow } from "../jobs/helpers.ts";

/**
 * A job store that is not a regular file, and signals, through dist/dl. Before: `dl wait`
 * on a FIFO store blocked in openat() for ever and ignored SIGTERM and SIGINT (a
 * JavaScript handler cannot run while a synchronous open holds the thread). Now wait,
 * status and reap refuse it in well under a second, exit 2, naming the file; and a
 * command waiting on its jobs ends within a second of either signal.
 */
const SIGNALS = ["SIGTERM", "SIGINT"] as const;
const procs: ReturnType<typeof Bun.spawn>[] = [];
afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
});

function run(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([requireBinary(), ...args], { env: testEnv(env), stdout: "pipe", stderr: "pipe" });
  procs.push(p);
  return p;
}

/** Waits for `p` to end; one that is still blocked after 10 s is killed, so the test fails fast. */
async function finished(p: ReturnType<typeof Bun.spawn>) {
  const deadline = setTimeout(() => p.kill("SIGKILL"), 10_000);
  try {
    const [stderr, code] = await Promise.all([new Response(p.stderr as ReadableStream).text(), p.exited]);
    return { stderr, code, signal: p.signalCode };
  } finally {
    clearTimeout(deadline);
  }
}

/** A dsh state dir whose `name` (the database or its WAL) is a FIFO nobody writes. */
function fifoStore(name: string): { dir: string; file: string } {
  const dir = join(tempDir("fifo-store"), "dsh");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  makeFifo(file);
  return { dir, file };
}

describe("a job store that is not a regular file", () => {
  const COMMANDS: [string, string[]][] = [
    ["wait", ["wait", "dsh-0123456789"]],
    ["status", ["status", "--json"]],
    ["reap", ["reap"]],
  ];
  for (const [name, args] of COMMANDS) {
    for (const file of ["jobs.sqlite", "jobs.sqlite-wal"]) {
      test(`dl ${name}: ${file} a FIFO is refused, exit 2 naming it, never opened (which would block for good)`, async () => {
        const store = fifoStore(file);
        const t0 = performance.now();
        const r = await finished(run(args, { DELEGATE_DSH_STATE_DIR: store.dir }));
        // Opening the FIFO would block with no writer, forever: ending at all is the proof; the
        // bound is start-up on a loaded machine (a 1 s bound failed at 1.8 s under a full run).
        expect(performance.now() - t0).toBeLessThan(15_000);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`dl ${name}: ${JSON.stringify(store.file)} is a FIFO, not a regular file`);
        expect(r.stderr).toContain("DELEGATE_DSH_STATE_DIR");
      });
    }
  }

  test("the store layer refuses it before opening (what a server meets), without the path in the message", async () => {
    const store = fifoStore("jobs.sqlite");
    const go = join(store.dir, "..", "go");
    writeFileSync(go, "");
    // In a child: a store that did block would hold this test's own thread.
    const p = Bun.spawn(["bun", join(import.meta.dir, "..", "fixture", "jobs-store-open.ts"), store.dir, go], {
      env: testEnv(),
      stdout: "pipe",
      stderr: "pipe",
    });
    procs.push(p);
    const out = new Response(p.stdout).text();
    const r = await finished(p);
    expect(r.code).toBe(0);
    expect(await out).toContain("error: job storage refused: a job store file is a FIFO, not a regular file");
    expect(await out).not.toContain(store.dir);
  });
});

describe("signals end a waiting command within a second", () => {
  const stateDir = join(tempDir("signal-store"), "codex");
  const store = JobStore.open(stateDir);
  afterAll(() => store.close());
  const me = selfOwner();

  /** A job of a live owner (this test): `dl wait` on it waits until a signal. */
  function runningJob(id: string): void {
    store.insertMany([liveCodexRow(id, me)]);
  }

  for (const sig of SIGNALS) {
    test(`dl wait on a running job: ${sig} ends it within 1 s`, async () => {
      // A well-formed id (dl wait refuses any other at once): one per signal.
      const id = `cx-00000051${sig === "SIGTERM" ? "f0" : "f1"}`;
      runningJob(id);
      const p = run(["wait", id], { DELEGATE_CODEX_STATE_DIR: stateDir });
      await until(() => hasStoreOpen(p.pid, stateDir), "dl wait to open the store");
      const t0 = performance.now();
      p.kill(sig);
      const r = await finished(p);
      expect(performance.now() - t0).toBeLessThan(1_000);
      expect(r.code === (sig === "SIGINT" ? 130 : 143) || r.signal === sig).toBe(true);
    });
  }

  test("dl wait blocked inside SQLite (another process holds the store exclusively): SIGTERM ends it within 1 s", async () => {
    const busyDir = join(tempDir("busy-store"), "codex");
    const own = JobStore.open(busyDir);
    own.close();
    // Exclusive locking mode: every other connection meets SQLITE_BUSY and its busy handler
    // waits (synchronously, up to busy_timeout) inside the call.
    const holder = new Database(join(busyDir, "jobs.sqlite"));
    holder.exec("PRAGMA locking_mode = EXCLUSIVE");
    holder.exec("BEGIN EXCLUSIVE");
    try {
      const p = run(["wait", "cx-00000b0511"], { DELEGATE_CODEX_STATE_DIR: busyDir });
      await until(() => hasStoreOpen(p.pid, busyDir), "dl wait to open the store");
      const t0 = performance.now();
      p.kill("SIGTERM");
      const r = await finished(p);
      expect(performance.now() - t0).toBeLessThan(1_000);
      expect(r.code === 143 || r.signal === "SIGTERM").toBe(true);
    } finally {
      holder.exec("COMMIT");
      holder.close();
    }
  });

  for (const sig of SIGNALS) {
    test(`dl status while a gateway never answers: ${sig} ends it within 1 s`, async () => {
      const seen = Promise.withResolvers<void>();
      const hang = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        idleTimeout: 0,
        fetch: () => {
          seen.resolve();
          return new Promise<Response>(() => {});
        },
      });
      try {
        const p = run(["status", "--json"], { DELEGATE_LOCAL_URL: `http://127.0.0.1:${hang.port}` });
        await seen.promise;
        const t0 = performance.now();
        p.kill(sig);
        const r = await finished(p);
        expect(performance.now() - t0).toBeLessThan(1_000);
        expect(r.code === (sig === "SIGINT" ? 130 : 143) || r.signal === sig).toBe(true);
      } finally {
        hang.stop(true);
      }
    });
  }
});
