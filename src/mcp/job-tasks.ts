import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CancelResult } from "../jobs/engine.ts";
import { PROVIDERS } from "../jobs/providers/index.ts";
import type { ServerDeps } from "../services.ts";
import { isTerminal, type JobRow } from "../store/types.ts";
import { toolOk } from "./tool-result.ts";

/**
 * MCP tasks (the protocol's task-augmented tool calls) answered from the job stores.
 * A submit call made as a task becomes one MCP task whose id is the ids of the jobs it
 * queued, joined by ",": nothing about it lives in this process, so tasks/get,
 * tasks/result and tasks/cancel keep working after the server that created it restarts.
 */

/** What the task store needs of a job service (Codex, dsh, Gemini, agent). */
interface JobService {
  readonly engine: { row(id: string): JobRow | undefined; list(limit?: number): { id: string }[] };
  poll(ids: readonly string[]): { jobs: readonly unknown[] };
  cancel(id: string): Promise<CancelResult>;
}

/** Job id prefix → the service that owns it. */
function servicesByPrefix(deps: ServerDeps): [string, () => Promise<JobService>][] {
  return PROVIDERS.map((p) => [p.idPrefix, () => deps.jobService(p.name)]);
}

/** How often a client should ask again, in ms (the engine admits on a 250 ms tick). */
const POLL_INTERVAL_MS = 1000;
const MAX_IDS = 256;

const notFound = (taskId: string) => new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 200)}`);

/** The task's status from its jobs: working until all end; completed only if every one is done. */
function taskStatus(rows: readonly JobRow[]): { status: Task["status"]; statusMessage: string } {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const statusMessage = [...counts].map(([s, n]) => `${n} ${s}`).join(", ");
  if (rows.some((r) => !isTerminal(r.status))) return { status: "working", statusMessage };
  if (rows.every((r) => r.status === "done")) return { status: "completed", statusMessage };
  if (rows.every((r) => r.status === "cancelled")) return { status: "cancelled", statusMessage };
  return { status: "failed", statusMessage };
}

const iso = (ms: number) => new Date(ms).toISOString();

function taskOf(taskId: string, rows: readonly JobRow[]): Task {
  const created = Math.min(...rows.map((r) => r.created_at));
  const updated = Math.max(...rows.map((r) => r.ended_at ?? r.last_activity_at ?? r.started_at ?? r.created_at));
  return {
    taskId,
    ...taskStatus(rows),
    ttl: null,
    createdAt: iso(created),
    lastUpdatedAt: iso(updated),
    pollInterval: POLL_INTERVAL_MS,
  };
}

export class JobTaskStore implements TaskStore {
  constructor(private readonly deps: ServerDeps) {}

  /** The service and rows behind a task id, or null when any id is unknown. */
  private async resolve(taskId: string): Promise<{ svc: JobService; ids: string[]; rows: JobRow[] } | null> {
    const ids = taskId.split(",");
    if (ids.length === 0 || ids.length > MAX_IDS) return null;
    const entry = servicesByPrefix(this.deps).find(([p]) => ids.every((id) => id.startsWith(p)));
    if (!entry) return null;
    const svc = await entry[1]();
    const rows = ids.map((id) => svc.engine.row(id));
    if (rows.some((r) => r === undefined)) return null;
    return { svc, ids, rows: rows as JobRow[] };
  }

  /** The task a submit call just created (its jobs are recorded already). */
  async taskFor(ids: readonly string[]): Promise<Task> {
    const task = await this.getTask(ids.join(","));
    if (!task) throw notFound(ids.join(","));
    return task;
  }

  async getTask(taskId: string): Promise<Task | null> {
    const found = await this.resolve(taskId);
    return found ? taskOf(taskId, found.rows) : null;
  }

  /** The jobs as the provider's poll tool shows them. */
  async getTaskResult(taskId: string): Promise<Result> {
    const found = await this.resolve(taskId);
    if (!found) throw notFound(taskId);
    const polled = found.svc.poll(found.ids);
    const { status, statusMessage } = taskStatus(found.rows);
    const result: CallToolResult = toolOk({ ...polled }, `${statusMessage}\n\n${JSON.stringify(polled, null, 2)}`);
    return status === "completed" ? result : { ...result, isError: true };
  }

  /** tasks/cancel: every job of the task that has not ended is cancelled (dequeued or stopped). */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled") return;
    const found = await this.resolve(taskId);
    if (!found) throw notFound(taskId);
    for (const r of found.rows) if (!isTerminal(r.status)) await found.svc.cancel(r.id);
  }

  /** Jobs are created by the submit tools themselves; the SDK never needs this path. */
  async createTask(_o: CreateTaskOptions): Promise<Task> {
    throw new McpError(
      ErrorCode.MethodNotFound,
      "tasks are created by calling a submit tool (submit_agent, submit_codex, …) as a task",
    );
  }

  /** A job's result is its row; nothing else is stored. */
  async storeTaskResult(): Promise<void> {}

  /** Recent jobs of the job services that can start here, one task per job. */
  async listTasks(): Promise<{ tasks: Task[] }> {
    const tasks: Task[] = [];
    for (const [, start] of servicesByPrefix(this.deps)) {
      const svc = await start().catch(() => null);
      if (!svc) continue;
      for (const v of svc.engine.list(50)) {
        const row = svc.engine.row(v.id);
        if (row) tasks.push(taskOf(v.id, [row]));
      }
    }
    return { tasks };
  }
}
