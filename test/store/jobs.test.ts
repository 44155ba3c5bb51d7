import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDlError } from "../../src/errors.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { tempDir } from "../helpers/dl.ts";
import { until } from "../helpers/until.ts";
import { newJob } from "./helpers.ts";

/** A fresh store folder; the suite's root (and it) is deleted at the end of the run. */
const storeDir = () => tempDir("dl-store");

const job = (id: string) => newJob(id);

describe("JobStore", () => {
  test("migrates to the latest schema in WAL mode and reopens idempotently", () => {
    const dir = storeDir();
    const a = JobStore.open(dir);
    const b = JobStore.open(dir);
    expect((a.db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(MIGRATIONS.length);
    expect((a.db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    a.insertMany([job("x")]);
    expect(b.get("x")?.status).toBe("queued");
    a.close();
    b.close();
  });

  test("insertMany is atomic and its guard can refuse the whole batch", () => {
    const s = JobStore.open(storeDir());
    s.insertMany([job("a"), job("b")]);
    expect(() => s.insertMany([job("c"), job("a")])).toThrow(); // duplicate id: nothing inserted
    expect(s.get("c")).toBeUndefined();
    expect(() =>
      s.insertMany([job("d")], (queued) => {
        if (queued >= 2) throw new Error("queue full");
      }),
    ).toThrow();
    expect(s.get("d")).toBeUndefined();
    expect(s.listByStatus(["queued"]).map((r) => r.id)).toEqual(["a", "b"]);
    s.close();
  });

  test("update with expected status is a compare-and-set", () => {
    const s = JobStore.open(storeDir());
    s.insertMany([job("a")]);
    expect(s.update("a", { status: "running" }, ["queued"])).toBe(true);
    expect(s.update("a", { status: "running" }, ["queued"])).toBe(false);
    expect(s.update("a", { status: "done", exit_code: 0, ended_at: 5 }, ["running"])).toBe(true);
    expect(s.get("a")).toMatchObject({ status: "done", exit_code: 0, ended_at: 5 });
    expect(() => s.update("a", { ["seq; DROP TABLE jobs" as "status"]: "x" } as never)).toThrow();
    s.close();
  });

  test("claimLaunch enforces the shared stagger and refuses rows no longer queued", () => {
    const s = JobStore.open(storeDir());
    s.insertMany([job("a"), job("b"), job("c")]);
    expect(s.claimLaunch("a", { started_at: 1000 }, 1000, 2500)).toEqual({ ok: true });
    expect(s.claimLaunch("b", {}, 2000, 2500)).toEqual({ ok: false, waitMs: 1500 });
    expect(s.claimLaunch("b", {}, 3500, 2500)).toEqual({ ok: true });
    s.update("c", { status: "cancelled" });
    expect(s.claimLaunch("c", {}, 9000, 0)).toEqual({ ok: false, gone: true });
    expect(s.get("a")?.status).toBe("running");
    s.close();
  });

  test("dataVersion moves when another connection commits", () => {
    const dir = storeDir();
    const w = JobStore.open(dir);
    const r = JobStore.open(dir);
    const v0 = r.dataVersion();
    w.insertMany([job("a")]);
    expect(r.dataVersion()).not.toBe(v0);
    w.close();
    r.close();
  });

  test("pruneFinished deletes only old finished rows", () => {
    const s = JobStore.open(storeDir());
    // Rows that ran (a job ends from running: store/transitions.ts).
    const ran = (id: string) => ({ ...job(id), status: "running" as const });
    s.insertMany([ran("old"), ran("new"), job("live")]);
    s.update("old", { status: "done", ended_at: 100 });
    s.update("new", { status: "failed", ended_at: 900 });
    expect(s.pruneFinished(500, true)).toHaveLength(1);
    expect(s.pruneFinished(500)).toHaveLength(1);
    expect(s.getMany(["old", "new", "live"]).map((r) => r.id)).toEqual(["new", "live"]);
    s.close();
  });

  test("a database written by a newer dl is refused (storage), not read or migrated backwards", () => {
    const dir = storeDir();
    const a = JobStore.open(dir);
    a.db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    a.close();
    try {
      JobStore.open(dir).close();
      throw new Error("opened");
    } catch (e) {
      expect(isDlError(e, "storage")).toBe(true);
      expect((e as Error).message).toContain("newer dl");
    }
  });

  test("an unwritable state dir fails closed with a storage error that names no path", () => {
    if (process.getuid?.() === 0) {
      // root ignores directory permissions; use a path under a regular file instead.
      const f = join(storeDir(), "file");
      writeFileSync(f, "x");
      try {
        JobStore.open(join(f, "state"));
        throw new Error("opened");
      } catch (e) {
        expect(isDlError(e, "storage")).toBe(true);
        expect((e as Error).message).not.toContain(f);
      }
      return;
    }
    const dir = storeDir();
    chmodSync(dir, 0o500);
    try {
      JobStore.open(join(dir, "state"));
      throw new Error("opened");
    } catch (e) {
      expect(isDlError(e, "storage")).toBe(true);
      expect((e as Error).message).not.toContain(dir);
    } finally {
      chmodSync(dir, 0o700);
    }
  });

  test("several processes writing at once: no SQLITE_BUSY escapes, no row lost, each claim once", async () => {
    const dir = storeDir();
    JobStore.open(dir).close();
    const writers = 4;
    const per = 150;
    const script = join(import.meta.dir, "../fixture/jobs-store-writer.ts");
    const procs = Array.from({ length: writers }, (_, i) =>
      Bun.spawn([process.execPath, script, dir, `w${i}`, String(per)], { stdout: "pipe", stderr: "pipe" }),
    );
    const s = JobStore.open(dir);
    // Release the claim phase only when every insert is in.
    await until(() => s.listByStatus(["queued"]).length >= writers * per, "the writers to finish inserting", 30_000);
    s.setMeta("go", "1");
    const outs = await Promise.all(
      procs.map(async (p) => {
        const [out, err, code] = await Promise.all([
          new Response(p.stdout).text(),
          new Response(p.stderr).text(),
          p.exited,
        ]);
        expect(err).not.toContain("SQLITE_BUSY");
        expect(code).toBe(0);
        return JSON.parse(out) as { claimed: number };
      }),
    );
    const rows = s.listByStatus(["running"]);
    expect(rows.length).toBe(writers * per);
    expect(outs.reduce((a, o) => a + o.claimed, 0)).toBe(writers * per);
    expect(rows.every((r) => r.last_activity_at !== null)).toBe(true);
    s.close();
  });
});
