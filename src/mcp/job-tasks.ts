import type { DetailedTaskV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { CancelResult } from "../jobs/engine/engine.ts";
import type { ServerDeps } from "../services.ts";
import { isTerminal, type JobRow } from "../store/types.ts";
import { toolOk } from "./tool-result.ts";

/**
 * MCP tasks (the `io.modelcontextprotocol/tasks` extension) answered from the job stores.
 * A call made as a task becomes one task whose id is the ids of the jobs it queued,
 * joined by ",": nothing about it lives in this process, so tasks/get and tasks/cancel
 * keep working from another `dl serve`, or this one restarted.
 */

/** What the task store needs of a job service (Codex, dsh, Gemini, agent). */
interface JobService {
  readonly engine: { row(id: string): JobRow | undefined; cancelMany(ids: readonly string[]): Promise<CancelResult[]> };
  poll(ids: readonly string[]): { jobs: readonly unknown[] } | Promise<{ jobs: readonly unknown[] }>;
}

/** Job id prefix → the service that owns it. */
function servicesByPrefix(deps: ServerDeps): [string, () => Promise<JobService>][] {
  return deps.providers.map((m) => [m.facts.idPrefix, () => deps.jobService(m)]);
}

/** How often a client should ask again, in ms (the engine admits on a 250 ms tick). */
const POLL_INTERVAL_MS = 1000;
const MAX_IDS = 256;

type Found = { svc: JobService; ids: string[]; rows: JobRow[] };

/** The task's status from its jobs: working until all end; cancelled if every one was. */
function taskStatus(rows: readonly JobRow[]): { status: "working" | "completed" | "cancelled"; statusMessage: string } {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const statusMessage = [...counts].map(([s, n]) => `${n} ${s}`).join(", ");
  if (rows.some((r) => !isTerminal(r.status))) return { status: "working", statusMessage };
  if (rows.every((r) => r.status === "cancelled")) return { status: "cancelled", statusMessage };
  return { status: "completed", statusMessage };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The result of a task whose jobs ended: the jobs as the provider's poll tool shows them.
 * A job that did not succeed is a tool error (`isError`), never a failed task: the
 * extension keeps `failed` for JSON-RPC errors.
 */
async function taskResult(found: Found, statusMessage: string): Promise<CallToolResult> {
  const polled = await found.svc.poll(found.ids);
  const result = toolOk({ ...polled }, `${statusMessage}\n\n${JSON.stringify(polled, null, 2)}`);
  return found.rows.every((r) => r.status === "done") ? result : { ...result, isError: true };
}

export class JobTaskStore {
  constructor(private readonly deps: ServerDeps) {}

  /** The service and rows behind a task id, or null when any id is unknown. */
  private async resolve(taskId: string): Promise<Found | null> {
    const ids = taskId.split(",");
    if (ids.length === 0 || ids.length > MAX_IDS) return null;
    const entry = servicesByPrefix(this.deps).find(([p]) => ids.every((id) => id.startsWith(p)));
    if (!entry) return null;
    const svc = await entry[1]().catch(() => null);
    if (!svc) return null;
    const rows = ids.map((id) => svc.engine.row(id));
    if (rows.some((r) => r === undefined)) return null;
    return { svc, ids, rows: rows as JobRow[] };
  }

  /** tasks/get: the task as its jobs stand now, with the result once they have all ended; null when unknown. */
  async get(taskId: string): Promise<DetailedTaskV2 | null> {
    const found = await this.resolve(taskId);
    if (!found) return null;
    const { rows } = found;
    const { status, statusMessage } = taskStatus(rows);
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
    if (status === "completed") {
      // The result as tools/call would answer it on 2026-07-28, where every result names its type.
      const result = JSON.parse(
        JSON.stringify({ ...(await taskResult(found, statusMessage)), resultType: "complete" }),
      );
      return { ...base, status, result };
    }
    return { ...base, status };
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
