import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../../../src/errors.ts";
import { sysIdentities } from "../../../src/jobs/engine/machine.ts";
import { OUTCOME_RESERVE, readOutcome, reserveOutcome, saveOutcome } from "../../../src/jobs/engine/outcome-file.ts";
import { reapDeadOwners } from "../../../src/jobs/engine/reaper.ts";
import { type RunnerContext, runJob } from "../../../src/jobs/engine/runner.ts";
import { JobStore } from "../../../src/store/jobs.ts";
import { isTerminal, type JobPatch, type JobRow } from "../../../src/store/types.ts";
import { knowSecrets } from "../../../src/sys/redact.ts";
import { testProvider, testTask } from "../../fixture/jobs-provider.ts";
import { tempFolder } from "../../helpers/dl.ts";
import { insertRunning, makeRepo, pidAlive, until } from "../helpers.ts";

const root = tempFolder("dl-runner-store");
afterAll(root.cleanup);
const stateDir = join(root.dir, "state");
const store = JobStore.open(stateDir);
afterAll(() => store.close());
const { trees } = makeRepo(root.dir, "proj", 0);
let n = 0;

/** A running row, as the engine leaves it after claimLaunch. */
function runningRow(spec: Parameters<typeof testTask>[1]): JobRow {
  return insertRunning(store, `tj-store${++n}`, trees[0]!, testTask(trees[0]!, spec).task as string);
}

/** The real store, except that update() throws while `fails(patch)` says so. */
function faultyStore(fails: (p: JobPatch) => boolean, message = "could not update a job: string or blob too big") {
  const calls: JobPatch[] = [];
  return {
    calls,
    update(id: string, patch: JobPatch, expect?: readonly JobRow["status"][]) {
      calls.push(patch);
      if (fails(patch)) throw new DlError("storage", message);
      return store.update(id, patch, expect);
    },
  };
}

function ctx(s: ReturnType<typeof faultyStore>, errors: string[]): RunnerContext {
  return {
    store: s,
    provider: testProvider,
    identities: sysIdentities,
    now: Date.now,
    graceMs: 300,
    outputCap: 1 << 20,
    jobsDir: join(stateDir, "jobs"),
    maxRetries: 0,
    retryDelayMs: () => 10,
    onPersistError: (_id, msg) => errors.push(msg),
    persistRetryMs: [5, 10, 20],
    lateRetryMs: [10, 20],
  };
}

describe("the runner when the store fails", () => {
  test("the final write is retried: a passing fault still ends the job done", async () => {
    const row = runningRow({ mode: "ok" });
    let left = 2;
    const s = faultyStore((p) => p.status === "done" && left-- > 0);
    const errors: string[] = [];
    await runJob(row, ctx(s, errors), new AbortController().signal);
    expect(store.get(row.id)).toMatchObject({ status: "done", exit_code: 0, persist_error: null });
    expect(s.calls.filter((p) => p.status === "done")).toHaveLength(3);
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });

  test("a final write that keeps failing is replaced by failed (infra) with persist_error", async () => {
    const row = runningRow({ mode: "ok" });
    const s = faultyStore((p) => p.status === "done");
    const errors: string[] = [];
    await runJob(row, ctx(s, errors), new AbortController().signal);
    const r = store.get(row.id)!;
    expect(r).toMatchObject({ status: "failed", failure_kind: "infra", exit_code: 0 });
    expect(r.persist_error).toContain("string or blob too big");
    expect(r.ended_at).not.toBeNull();
    expect(errors[0]).toContain("string or blob too big");
  });

  test("a persist_error is redacted before it is cut to 500 characters: no first part of a key is kept", async () => {
    const key = "dl-test-key-3f9a1c77e2b84d05a6c1";
    knowSecrets([key]);
    const row = runningRow({ mode: "ok" });
    // The key starts before character 500 of the recorded text and ends after it.
    const s = faultyStore((p) => p.status === "done", `${"x".repeat(440)} ${key} after the key`);
    await runJob(row, ctx(s, []), new AbortController().signal);
    const r = store.get(row.id)!;
    expect(r).toMatchObject({ status: "failed", failure_kind: "infra" });
    expect(r.persist_error).toContain("<redacted>");
    expect(r.persist_error).not.toContain(key.slice(0, 12));
  });

  test("when the child cannot be recorded it is stopped, and the row still ends (failed, infra)", async () => {
    const row = runningRow({ mode: "silent", ms: 30_000 });
    const s = faultyStore((p) => p.child_pid !== undefined);
    const errors: string[] = [];
    const t0 = Date.now();
    await runJob(row, ctx(s, errors), new AbortController().signal);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const r = store.get(row.id)!;
    expect(r).toMatchObject({ status: "failed", failure_kind: "infra" });
    expect(r.persist_error).toContain("string or blob too big");
    const pid = s.calls.find((p) => p.child_pid)?.child_pid;
    expect(pid).toBeGreaterThan(1);
    expect(pidAlive(pid!)).toBe(false);
  });

  test("the child's command runs only once its row names it: unrecorded, it never ran at all", async () => {
    // jobs-child.sh's first act is to append "start <id>" to the events file. The record is
    // retried for ~0.6 s before the run gives up: time enough for an ungated child to start.
    const events = join(root.dir, "unrecorded.events");
    const row = runningRow({ mode: "silent", ms: 30_000, events });
    const s = faultyStore((p) => p.child_pid !== undefined);
    const errors: string[] = [];
    await runJob(row, { ...ctx(s, errors), persistRetryMs: [200, 200, 200] }, new AbortController().signal);
    expect(s.calls.filter((p) => p.child_pid !== undefined).length).toBeGreaterThan(1);
    expect(store.get(row.id)).toMatchObject({ status: "failed", failure_kind: "infra" });
    expect(existsSync(events)).toBe(false);
  });

  test("a store that fails through the whole end: the end is kept in the job dir and recorded once the store can be written", async () => {
    const row = runningRow({ mode: "ok" });
    let broken = true;
    const s = faultyStore((p) => broken && p.status !== undefined);
    const errors: string[] = [];
    await runJob(row, ctx(s, errors), new AbortController().signal);
    // Every attempt failed: the row still says running, the job dir holds the real end.
    expect(store.get(row.id)?.status).toBe("running");
    expect(await readOutcome(join(stateDir, "jobs", row.id), row.id, row.started_at)).toMatchObject({
      status: "done",
      exit_code: 0,
    });
    // An earlier attempt's record never applies to this one.
    expect(await readOutcome(join(stateDir, "jobs", row.id), row.id, row.started_at! - 1)).toBeNull();
    broken = false;
    await until(() => store.get(row.id)?.status === "done", "the kept end to be recorded");
    expect(store.get(row.id)).toMatchObject({ status: "done", exit_code: 0, persist_error: null });
  });

  test("a dead server's kept end is recorded by the next reap, not called lost", async () => {
    const row = runningRow({ mode: "ok" });
    const s = faultyStore((p) => p.status !== undefined);
    await runJob(row, { ...ctx(s, []), lateRetryMs: [60_000] }, new AbortController().signal);
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    store.update(row.id, { owner_pid: dead.pid, owner_start: "1@gone", server_id: "srv-dead" });
    const actions = await reapDeadOwners(store, { identities: sysIdentities, now: Date.now });
    expect(actions).toEqual([expect.objectContaining({ id: row.id, status: "done", killed_pid: null })]);
    expect(store.get(row.id)).toMatchObject({ status: "done", exit_code: 0 });
    expect(store.get(row.id)?.final_response).toContain(`finished ${row.id}`);
  });

  test("an end too big for the reserved space is cut to fit it when nothing else can be written", async () => {
    const dir = join(stateDir, "jobs", "tj-fit");
    mkdirSync(dir, { recursive: true });
    reserveOutcome(dir);
    const rec = {
      id: "tj-fit",
      started_at: 1,
      patch: { status: "done" as const, final_response: "x".repeat(100_000) },
    };
    // Stand-in for a full disk: no new file can be written beside the reserved one (a
    // directory where the bigger record's temporary file would go; root ignores modes).
    mkdirSync(join(dir, "outcome.json.tmp"));
    expect(saveOutcome(dir, rec)).toBe(true);
    const kept = (await readOutcome(dir, "tj-fit", 1))!;
    expect(kept.status).toBe("done");
    expect(kept.final_response!.length).toBeLessThan(OUTCOME_RESERVE);
    expect(kept.final_response).toContain("[cut:");
  });
});

describe("what the child left, when the row reads ended", () => {
  test("the job's folder holds no key the moment its row turns terminal: the check runs before the end is written", async () => {
    const key = "sk-ant-api03-left-in-the-job-folder-0123456789abcdef";
    knowSecrets([key]);
    const row = runningRow({ mode: "ok" });
    const jobDir = join(stateDir, "jobs", row.id);
    // A child that leaves the key in a binary file (a CLI's SQLite state) and in a log.
    const provider = {
      ...testProvider,
      launch: (job: JobRow) => ({
        argv: ["/bin/sh", "-c", `printf 'SQLite format 3\\000%s\\n' "$K" > "$D/state.db"; echo "k=$K" > "$D/left.log"`],
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", K: key, D: jobDir },
        cwd: job.workdir,
      }),
    };
    const atEnd: string[] = [];
    const watching = {
      update(id: string, patch: JobPatch, expect?: readonly JobRow["status"][]) {
        if (patch.status && isTerminal(patch.status)) {
          for (const f of readdirSync(jobDir)) {
            if (readFileSync(join(jobDir, f), "latin1").includes(key)) atEnd.push(f);
          }
        }
        return store.update(id, patch, expect);
      },
    };
    await runJob(
      row,
      {
        ...ctx(
          faultyStore(() => false),
          [],
        ),
        store: watching,
        provider,
      },
      new AbortController().signal,
    );
    expect(store.get(row.id)?.status).toBe("done");
    expect(atEnd).toEqual([]);
    expect(existsSync(join(jobDir, "state.db"))).toBe(false);
    expect(readFileSync(join(jobDir, "left.log"), "utf8")).toBe("k=<redacted>\n");
  });
});
