import type { DetailedTaskV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { CancelResult } from "../jobs/engine/engine.ts";
import type { ServerDeps } from "../services.ts";
import { isTerminal, type JobRow } from "../store/types.ts";
import type { TaskAnswer } from "./tool-table.ts";
import { endedJobsResult } from "./tools/job-tools.ts";

/**
 * MCP tasks (the `io.modelcontextprotocol/tasks` extension) answered from the job stores.
 * A call made as a task becomes one task whose id names the jobs it queued (taskIdOf):
 * nothing about it lives in this process, so tasks/get and tasks/cancel keep working from
 * another `dl serve`, or this one restarted, and its result is the tool's own.
 */

/** What the task store needs of a job service (Codex, dsh, Gemini, agent). */
interface JobService {
  readonly engine: { row(id: string): JobRow | undefined; cancelMany(ids: readonly string[]): Promise<CancelResult[]> };
  poll(ids: readonly string[]): { jobs: readonly unknown[] } | Promise<{ jobs: readonly unknown[] }>;
}

/** How the task store finds a tool's answer: the task plan of a tool this server lists, by name. */
export type AnswerFor = (tool: string, provider: string) => TaskAnswer | undefined;

/** How often a client should ask again, in ms (the engine admits on a 250 ms tick). */
const POLL_INTERVAL_MS = 1000;
const MAX_IDS = 256;
/** Between two looks at the rows while a call waits to answer in place. */
const SETTLE_LOOK_MS = 50;
/** A statusMessage is one line a host shows in its task panel. */
const STATUS_MAX_CHARS = 400;

/**
 * A task's id: its jobs' ids joined by ",". A task of a tool other than its provider's
 * submit_* (delegate_to_local_agent, delegate_batch, …) names that tool first, as in
 * `delegate_batch:ag-…,ag-…`, so whichever server answers gives that tool's result. A
 * job id carries 40 random bits: a task id cannot be guessed.
 */
export function taskIdOf(tool: string | null, ids: readonly string[]): string {
  return tool ? `${tool}:${ids.join(",")}` : ids.join(",");
}

function parseTaskId(taskId: string): { tool: string | null; ids: string[] } {
  const colon = taskId.indexOf(":");
  if (colon < 0) return { tool: null, ids: taskId.split(",") };
  return { tool: taskId.slice(0, colon), ids: taskId.slice(colon + 1).split(",") };
}

/** Job id prefix → the provider and its service. */
function servicesByPrefix(deps: ServerDeps): [string, string, () => Promise<JobService>][] {
  return deps.providers.map((m) => [m.facts.idPrefix, m.facts.name, () => deps.jobService(m)]);
}

type Found = { svc: JobService; ids: string[]; rows: JobRow[]; answer: TaskAnswer };

/** The status counts of the jobs, as "2 running, 1 done". */
function counted(rows: readonly JobRow[]): string {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n} ${s}`).join(", ");
}

/** The task's status from its jobs: working until all end; cancelled if every one was. */
function taskStatus(rows: readonly JobRow[]): "working" | "completed" | "cancelled" {
  if (rows.some((r) => !isTerminal(r.status))) return "working";
  if (rows.every((r) => r.status === "cancelled")) return "cancelled";
  return "completed";
}

/** A job view as the poll tools give it; an agent job's has its child's latest progress. */
type ViewLike = {
  id?: string;
  status?: string;
  queue_reason?: string | null;
  elapsed_s?: number | null;
  progress?: { last_action?: string };
};

/** Where one job is: its queue reason, or a running agent's turn and last tool with its exit. */
function jobPhrase(v: ViewLike): string {
  if (v.status === "queued") return v.queue_reason ? `queued (${v.queue_reason})` : "queued";
  if (v.status !== "running") return v.status ?? "unknown";
  if (v.progress?.last_action) return v.progress.last_action;
  return typeof v.elapsed_s === "number" ? `running ${v.elapsed_s} s` : "running";
}

/** A working task's statusMessage: how its jobs stand and where each unfinished one is. */
function workingMessage(rows: readonly JobRow[], views: readonly ViewLike[]): string {
  const active = views.filter((v) => v.status === "queued" || v.status === "running");
  const message =
    views.length === 1
      ? jobPhrase(views[0]!)
      : [counted(rows), ...active.slice(0, 4).map((v) => `${v.id}: ${jobPhrase(v)}`)].join("; ");
  return message.length > STATUS_MAX_CHARS ? `${message.slice(0, STATUS_MAX_CHARS - 1)}…` : message;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class JobTaskStore {
  constructor(
    private readonly deps: ServerDeps,
    private readonly answerFor: AnswerFor = () => undefined,
  ) {}

  /** The service, rows and answer behind a task id, or null when any id is unknown. */
  private async resolve(taskId: string): Promise<Found | null> {
    const { tool, ids } = parseTaskId(taskId);
    if (ids.length === 0 || ids.length > MAX_IDS) return null;
    const entry = servicesByPrefix(this.deps).find(([p]) => ids.every((id) => id.startsWith(p)));
    if (!entry) return null;
    const svc = await entry[2]().catch(() => null);
    if (!svc) return null;
    const rows = ids.map((id) => svc.engine.row(id));
    if (rows.some((r) => r === undefined)) return null;
    // A tool this server does not list (or a submit task) answers as the poll tool would.
    const named = tool === null ? undefined : this.answerFor(tool, entry[1]);
    const answer = named ?? (async (i: readonly string[]) => endedJobsResult(await svc.poll(i)));
    return { svc, ids, rows: rows as JobRow[], answer };
  }

  /** tasks/get: the task as its jobs stand now, with the result once they have all ended; null when unknown. */
  async get(taskId: string): Promise<DetailedTaskV2 | null> {
    const found = await this.resolve(taskId);
    if (!found) return null;
    const { rows } = found;
    const status = taskStatus(rows);
    const statusMessage =
      status === "working" ? workingMessage(rows, (await found.svc.poll(found.ids)).jobs as ViewLike[]) : counted(rows);
    const base = {
      taskId,
      statusMessage,
      createdAt: iso(Math.min(...rows.map((r) => r.created_at))),
      lastUpdatedAt: iso(
        Math.max(...rows.map((r) => r.ended_at ?? r.last_activity_at ?? r.started_at ?? r.created_at)),
      ),
      ttlMs: null,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    if (status !== "completed") return { ...base, status };
    // The result as tools/call would answer it on 2026-07-28, where every result names its type.
    const result = JSON.parse(JSON.stringify({ ...(await found.answer(found.ids)), resultType: "complete" }));
    return { ...base, status, result };
  }

  /**
   * Waits up to `ms` for every job of the task to end (a quick call answers in place);
   * true once they all have. Stops early when `signal` aborts.
   */
  async settle(taskId: string, ms: number, signal: AbortSignal): Promise<boolean> {
    const deadline = performance.now() + ms;
    const found = await this.resolve(taskId);
    if (!found) return false;
    for (;;) {
      const ended = found.ids.every((id) => {
        const st = found.svc.engine.row(id)?.status;
        return st !== undefined && isTerminal(st);
      });
      if (ended) return true;
      const left = deadline - performance.now();
      if (left <= 0 || signal.aborted) return false;
      await Bun.sleep(Math.min(SETTLE_LOOK_MS, left));
    }
  }

  /** The result a completed task answers with, as a tools/call result (for a call answered in place). */
  async result(taskId: string): Promise<CallToolResult | null> {
    const found = await this.resolve(taskId);
    if (!found || taskStatus(found.rows) !== "completed") return null;
    return found.answer(found.ids);
  }

  /**
   * tasks/cancel: every job of the task that has not ended is cancelled (dequeued or
   * stopped), or none is: the engine checks that each belongs to this session's project
   * (or to a dead server) before it changes one (jobs/cancel.ts); false when unknown.
   */
  async cancel(taskId: string): Promise<boolean> {
    const found = await this.resolve(taskId);
    if (!found) return false;
    await found.svc.engine.cancelMany(found.rows.filter((r) => !isTerminal(r.status)).map((r) => r.id));
    return true;
  }
}
