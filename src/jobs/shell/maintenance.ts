import { rmSync } from "node:fs";
import { eachStore } from "../../store/each-store.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { JobRow } from "../../store/types.ts";
import type { JobStateDir } from "../../sys/paths.ts";
import { jobDirOf } from "../../sys/paths.ts";
import { recordUnledgeredEnds } from "../../usage/ledger.ts";
import { type DisplayState, judgeJob } from "../engine/display-state.ts";
import { jobLiveness } from "../engine/liveness.ts";
import type { Identities } from "../engine/machine.ts";
import { type ReapAction, reapDeadOwners } from "../engine/reaper.ts";
import type { OrphanHandOver } from "./hand-over.ts";

export interface ReapReport {
  provider: string;
  /** The store's folder: a provider can have several (a host that moved one). */
  state_dir: string;
  /** Rows of dead servers ended now (or that would be, on a dry run). */
  reaped: ReapAction[];
  /** Finished rows older than the retention period, deleted (or counted). */
  pruned: number;
  error?: string;
}

/** Ids dl makes: a provider prefix and hex. Anything else in a row is not turned into a path. */
const JOB_ID = /^[a-z]{2,8}-[0-9a-f]{6,32}$/;

/**
 * A pruned job's folder goes with its row: it holds the task text and the answer, which
 * nothing can show once the row is gone. A link in its place is removed, never followed.
 */
function removeJobDirs(stateDir: string, ids: readonly string[]): void {
  for (const id of ids) {
    if (!JOB_ID.test(id)) continue;
    try {
      rmSync(jobDirOf(stateDir, id), { recursive: true, force: true });
    } catch {
      // Left for the next reap: the row is gone, the folder holds nothing that runs.
    }
  }
}

/**
 * `dl reap`: for every provider store that exists, end the running rows of dead servers
 * (kill verified orphans), hand their queued ones to supervisors of their own, and prune
 * finished rows older than `retentionMs`.
 */
export async function reapAll(
  sources: readonly JobStateDir[],
  o: {
    identities: Identities;
    retentionMs: number;
    dryRun: boolean;
    now?: () => number;
    /** What a reaped run of `provider` spent, from its files (Provider.spent), for the ledger. */
    spent?: (provider: string, row: JobRow, jobDir: string) => Record<string, unknown> | null;
    /** Hands a dead server's queued job to a supervisor of its own (hand-over.ts); absent, it is recorded lost. */
    handOver?: OrphanHandOver;
  },
): Promise<ReapReport[]> {
  const now = o.now ?? Date.now;
  const visits = await eachStore(sources, async (store, s): Promise<ReapReport> => {
    const spent = o.spent && ((row: JobRow, dir: string) => o.spent!(s.provider, row, dir));
    const adoptQueued = o.handOver && ((row: JobRow) => o.handOver!(store, s, row));
    const reaped = await reapDeadOwners(store, { identities: o.identities, now, dryRun: o.dryRun, spent, adoptQueued });
    // A run whose end never reached the ledger is recorded before its row can go.
    if (!o.dryRun) recordUnledgeredEnds(store);
    const pruned = store.pruneFinished(now() - o.retentionMs, o.dryRun);
    if (!o.dryRun) removeJobDirs(s.stateDir, pruned);
    return { provider: s.provider, state_dir: s.stateDir, reaped, pruned: pruned.length };
  });
  return visits.flatMap((v): ReapReport[] => {
    if ("value" in v) return [v.value];
    if ("absent" in v) return [];
    return [{ provider: v.source.provider, state_dir: v.source.stateDir, reaped: [], pruned: 0, error: v.error }];
  });
}

export type ActiveJob = {
  id: string;
  status: string;
  queue_reason: string | null;
  workdir: string;
  model: string | null;
  created_at: number;
  started_at: number | null;
  owner_alive: boolean;
  /** How the job reads (display-state.ts): the same word in every command. */
  state: DisplayState;
  reason: string;
  /** Its server is gone; `state` is what dl reap will record. */
  orphaned: boolean;
  /** The agent of an agent job. */
  agent: string | null;
  /** A running job whose child waits for a model pool slot: which one. */
  slot_wait: { model: string; bucket: string } | null;
};

/** The agent an agent job's params name (null for other kinds, or unreadable params). */
export function agentOf(params: string | null): string | null {
  try {
    const v = JSON.parse(params ?? "null") as { agent_name?: unknown } | null;
    return typeof v?.agent_name === "string" ? v.agent_name : null;
  } catch {
    return null;
  }
}

/** Tells whether a running job's child waits for a pool slot (agent jobs know; others never do). */
export type SlotWaitOf = (s: JobStateDir, row: JobRow) => { model: string; bucket: string } | null;

export interface JobsSummary {
  provider: string;
  /** The store's folder: a provider can have several (a host that moved one). */
  state_dir: string;
  running: number;
  queued: number;
  /** Per project (canonical git common dir): running and queued. */
  projects: { project: string; running: number; queued: number }[];
  /** Active rows whose owning server is gone (dl reap ends them). */
  orphaned: number;
  /** Each queued or running job, oldest first: what `dl status --watch` lists. */
  active: ActiveJob[];
  /** Launch stagger record and any shared cooldown a provider keeps in meta. */
  last_launch_ms: number | null;
  error?: string;
}

function emptySummary(s: JobStateDir): JobsSummary {
  const empty = { running: 0, queued: 0, projects: [], orphaned: 0, active: [], last_launch_ms: null };
  return { provider: s.provider, state_dir: s.stateDir, ...empty };
}

function activeJob(s: JobStateDir, r: JobRow, identities: Identities, slotWaitOf?: SlotWaitOf): ActiveJob {
  const live = jobLiveness(r, identities);
  const slot_wait = live.owner && r.status === "running" ? (slotWaitOf?.(s, r) ?? null) : null;
  const verdict = judgeJob(r, live, slot_wait ? `waiting for a slot of pool ${slot_wait.bucket}` : null);
  const agent = agentOf(r.params);
  return {
    id: r.id,
    // A dead server's row has the status it reads as until a reap records it.
    status: verdict.orphaned ? verdict.state : r.status,
    queue_reason: r.status === "queued" ? r.queue_reason : null,
    workdir: r.workdir,
    model: r.model,
    created_at: r.created_at,
    started_at: r.started_at,
    owner_alive: live.owner,
    state: verdict.state,
    reason: verdict.reason,
    orphaned: verdict.orphaned,
    agent,
    slot_wait,
  };
}

/** One store's part of the jobs section: counts per status and project, and each active job. */
function storeSummary(store: JobStore, s: JobStateDir, identities: Identities, slotWaitOf?: SlotWaitOf): JobsSummary {
  const rows = store.listActive();
  const per = new Map<string, { project: string; running: number; queued: number }>();
  const active = rows.map((r) => {
    const p = per.get(r.project) ?? { project: r.project, running: 0, queued: 0 };
    if (r.status === "running") p.running++;
    else p.queued++;
    per.set(r.project, p);
    return activeJob(s, r, identities, slotWaitOf);
  });
  const last = store.getMeta("last_launch_ms");
  return {
    provider: s.provider,
    state_dir: s.stateDir,
    running: rows.filter((r) => r.status === "running").length,
    queued: rows.filter((r) => r.status === "queued").length,
    projects: [...per.values()],
    orphaned: active.filter((j) => j.orphaned).length,
    active,
    last_launch_ms: last === undefined ? null : Number(last),
  };
}

/** The jobs section of `dl status`. Read-only apart from opening existing stores. */
export function jobsSummary(
  sources: readonly JobStateDir[],
  identities: Identities,
  slotWaitOf?: SlotWaitOf,
): JobsSummary[] {
  return eachStore(sources, (store, s) => storeSummary(store, s, identities, slotWaitOf)).map((v) => {
    if ("value" in v) return v.value;
    return "error" in v ? { ...emptySummary(v.source), error: v.error } : emptySummary(v.source);
  });
}
