import type { JobRow, TerminalStatus } from "../../store/types.ts";
import { isTerminal } from "../../store/types.ts";
import { deadOwnerStatus } from "./dead-owner.ts";
import type { Liveness } from "./liveness.ts";

/**
 * How a job reads in every command: dl wait, status, jobs, show and reap. The row says
 * what its server last recorded; liveness says whether that server (and its child) is
 * still there. `waiting` is a running job whose child waits for a model pool slot. An
 * active row whose server died is `orphaned`: a running one reads as what `dl reap` (or
 * the next server on its store) will record — `killed_on_restart` when a verified child
 * is left to stop or its jail died with its server, else `lost` — and `reason` says what
 * reap does. A queued one still reads `queued`: its work never started, and the next dl
 * wait, dl reap or dl serve on its store hands it to a supervisor of its own.
 */
export type DisplayState = "queued" | "running" | "waiting" | TerminalStatus;

type ReapPlan = { becomes: "killed_on_restart" | "lost" | "queued"; kills: "leader" | "survivors" | null };

export interface JobVerdict {
  state: DisplayState;
  /** Why, in words: a queue reason, a failure kind, or what reap will do. Empty when nothing to add. */
  reason: string;
  /** What `dl reap` does with this row now; null when it leaves the row alone. */
  reap: ReapPlan | null;
  /** The row is still queued or running but its server is gone (reap has not ended it yet). */
  orphaned: boolean;
}

/** An orphan's story: why it is orphaned, what reap will do, and what reap did. */
export type OrphanStory = { plan: ReapPlan; why: string; act: string; done: string };

/** What reap does with an orphan: the same words for dl status, jobs, wait and reap --dry-run. */
export function orphanPlan(row: Pick<JobRow, "provider" | "status" | "child_pid">, live: Liveness): OrphanStory {
  if (row.status === "queued")
    return {
      plan: { becomes: "queued", kills: null },
      why: "its server died before the job started",
      act: "hand it to a supervisor of its own to wait in the queue; so will dl wait and the next dl serve",
      done: "handed to a supervisor of its own to wait in the queue",
    };
  if (live.child === "leader")
    return {
      plan: { becomes: "killed_on_restart", kills: "leader" },
      why: `its supervisor died while its child (pid ${row.child_pid}) still runs`,
      act: "stop the child and record killed_on_restart",
      done: "the child was stopped, recorded killed_on_restart",
    };
  if (live.child === "survivors")
    return {
      plan: { becomes: "killed_on_restart", kills: "survivors" },
      why: `its supervisor died; its child exited but processes of its group (${row.child_pid}) still run`,
      act: "stop them and record killed_on_restart",
      done: "they were stopped, recorded killed_on_restart",
    };
  // Nothing left to kill: how the run reads depends on whether it could have ended on its own.
  if (deadOwnerStatus(row) === "killed_on_restart")
    return {
      plan: { becomes: "killed_on_restart", kills: null },
      why: "its supervisor died and its jailed run died with it; what it changed in the workdir stays (review it before resubmitting)",
      act: "record killed_on_restart",
      done: "recorded killed_on_restart",
    };
  return {
    plan: { becomes: "lost", kills: null },
    why: "its supervisor died and no verified child of it is left",
    act: "record it lost",
    done: "recorded lost",
  };
}

/** The one decision. `slotWait` describes what a running job's child waits for, if anything. */
export function judgeJob(
  row: Pick<JobRow, "provider" | "status" | "queue_reason" | "failure_kind" | "child_pid">,
  live: Liveness,
  slotWait?: string | null,
): JobVerdict {
  const settled = { reap: null, orphaned: false };
  if (isTerminal(row.status)) return { state: row.status, reason: row.failure_kind ?? "", ...settled };
  if (!live.owner) {
    const o = orphanPlan(row, live);
    return { state: o.plan.becomes, reason: `${o.why}; dl reap will ${o.act}`, reap: o.plan, orphaned: true };
  }
  if (row.status === "queued") return { state: "queued", reason: row.queue_reason ?? "", ...settled };
  if (slotWait) return { state: "waiting", reason: slotWait, ...settled };
  return { state: "running", reason: "", ...settled };
}
