import { describe, expect, test } from "bun:test";
import { judgePending, nextStep, WAIT_EXIT } from "../../../src/jobs/shell/wait.ts";
import type { JobRow } from "../../../src/store/types.ts";

const row = (id: string, status: JobRow["status"]) => ({ id, status }) as JobRow;
const rowsOf = (...rows: JobRow[]) => new Map(rows.map((r) => [r.id, r]));

describe("dl wait decisions", () => {
  test("ended rows leave the pending list with their status; running ones stay", () => {
    const v = judgePending(
      ["a", "b", "c"],
      { rows: rowsOf(row("a", "done"), row("b", "running"), row("c", "failed")), complete: true },
      new Set(["a", "b", "c"]),
      null,
    );
    expect(v.ended.map((e) => ("pruned" in e ? `${e.id}:pruned` : `${e.id}:${e.status}`))).toEqual([
      "a:done",
      "c:failed",
    ]);
    expect(v.still).toEqual(["b"]);
  });

  test("a dead owner ends a running row as what reap will record, only on passes that check owners", () => {
    const read = { rows: rowsOf(row("a", "running")), complete: true };
    const dead = () => ({ owner: false, child: null });
    expect(judgePending(["a"], read, new Set(["a"]), null).still).toEqual(["a"]);
    expect(judgePending(["a"], read, new Set(["a"]), dead).ended).toEqual([
      {
        id: "a",
        row: read.rows.get("a")!,
        status: "lost",
        reason: "its supervisor died and no verified child of it is left; dl reap will record it lost",
      },
    ]);
    expect(judgePending(["a"], read, new Set(["a"]), () => ({ owner: true, child: null })).still).toEqual(["a"]);
  });

  test("a dead owner's queued row never started: it stays pending, adrift for the wait to hand over", () => {
    const read = { rows: rowsOf(row("q", "queued")), complete: true };
    const v = judgePending(["q"], read, new Set(["q"]), () => ({ owner: false, child: null }));
    expect(v).toEqual({ ended: [], still: ["q"], adrift: [read.rows.get("q")!] });
    // Not on a pass that does not check owners, nor with a live owner.
    expect(judgePending(["q"], read, new Set(["q"]), null).adrift).toEqual([]);
    expect(judgePending(["q"], read, new Set(["q"]), () => ({ owner: true, child: null })).adrift).toEqual([]);
  });

  test("a seen id gone from every store is pruned; not when a store did not answer, nor when never seen", () => {
    const none = new Map<string, JobRow>();
    expect(judgePending(["x"], { rows: none, complete: true }, new Set(["x"]), null).ended).toEqual([
      { id: "x", pruned: true },
    ]);
    expect(judgePending(["x"], { rows: none, complete: false }, new Set(["x"]), null).still).toEqual(["x"]);
    expect(judgePending(["x"], { rows: none, complete: true }, new Set(), null).still).toEqual(["x"]);
  });

  test("deadlines: the first that applies wins; an abort is a timeout; else sleep until the nearer one", () => {
    const base = { t: 0, start: 0, appearMs: 30_000, watchMs: 25, missing: [] as string[], aborted: false };
    expect(nextStep(base)).toEqual({ sleepMs: 25 });
    expect(nextStep({ ...base, timeoutMs: 10, t: 5 })).toEqual({ sleepMs: 5 });
    expect(nextStep({ ...base, timeoutMs: 10, t: 10 })).toEqual({ code: WAIT_EXIT.timeout, missing: [] });
    expect(nextStep({ ...base, missing: ["m"], t: 30_000 })).toEqual({ code: WAIT_EXIT.missing, missing: ["m"] });
    expect(nextStep({ ...base, missing: ["m"], timeoutMs: 20_000, t: 20_000 })).toEqual({
      code: WAIT_EXIT.timeout,
      missing: [],
    });
    expect(nextStep({ ...base, missing: ["m"], timeoutMs: 60_000, t: 30_000 })).toEqual({
      code: WAIT_EXIT.missing,
      missing: ["m"],
    });
    expect(nextStep({ ...base, aborted: true })).toEqual({ code: WAIT_EXIT.timeout, missing: [] });
    expect(nextStep({ ...base, timeoutMs: 10, t: 9.5 })).toEqual({ sleepMs: 1 });
  });
});
