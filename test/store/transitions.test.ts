import { describe, expect, test } from "bun:test";
import { isDlError } from "../../src/errors.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { canMove, LEGAL_MOVES, movesInto } from "../../src/store/transitions.ts";
import { ACTIVE_STATUSES, type JobStatus, TERMINAL_STATUSES } from "../../src/store/types.ts";
import { tempDir } from "../helpers/dl.ts";
import { newJob } from "./helpers.ts";

const ALL: JobStatus[] = [...ACTIVE_STATUSES, ...TERMINAL_STATUSES];

const job = (id: string) => newJob(id);

describe("the legal moves of a job's status", () => {
  test("the table, whole: every pair of statuses is either a listed move or refused", () => {
    const moves = ALL.flatMap((from) => ALL.filter((to) => canMove(from, to)).map((to) => `${from}>${to}`));
    expect(moves).toEqual([
      "queued>running",
      "queued>failed",
      "queued>cancelled",
      "queued>lost",
      "running>queued",
      "running>done",
      "running>failed",
      "running>timeout",
      "running>cancelled",
      "running>auth_failed",
      "running>lost",
      "running>killed_on_restart",
    ]);
    expect(Object.keys(LEGAL_MOVES).sort()).toEqual([...ALL].sort());
  });

  test("an ended job is never moved again, and nothing is queued but a retry", () => {
    for (const s of TERMINAL_STATUSES) expect(LEGAL_MOVES[s]).toEqual([]);
    expect(ALL.filter((s) => canMove(s, "queued"))).toEqual(["running"]);
    expect(ALL.filter((s) => canMove(s, "done"))).toEqual(["running"]);
  });

  test("a write names the statuses it may land on, narrowed by the caller's compare-and-set", () => {
    expect(movesInto("cancelled")).toEqual(["queued", "running"]);
    expect(movesInto("cancelled", ["queued"])).toEqual(["queued"]);
    let err: unknown;
    try {
      movesInto("running", ["done"]);
    } catch (e) {
      err = e;
    }
    expect(isDlError(err, "internal")).toBe(true);
  });

  test("the store holds every status write to the table: a finished row is never rewritten", () => {
    const s = JobStore.open(tempDir("dl-moves"));
    s.insertMany([job("a"), job("b")]);
    // Straight from the queue to done is no move a job makes.
    expect(s.update("a", { status: "done", ended_at: 5 })).toBe(false);
    expect(s.get("a")?.status).toBe("queued");
    expect(s.update("a", { status: "running" })).toBe(true);
    expect(s.update("a", { status: "done", ended_at: 5 })).toBe(true);
    // A late writer (a reap, a second end) finds the row ended and changes nothing.
    expect(s.update("a", { status: "lost" })).toBe(false);
    expect(s.update("a", { status: "running" })).toBe(false);
    expect(s.get("a")).toMatchObject({ status: "done", ended_at: 5 });
    // A patch without a status is not a move: it lands whatever the status.
    expect(s.update("a", { persist_error: "x" })).toBe(true);
    expect(() => s.update("b", { status: "running" }, ["done"])).toThrow(/cannot become running/);
    s.close();
  });
});
