import { ProtocolError, ProtocolErrorCode, type Server, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { isDlError } from "../errors.ts";
import type { JobTaskStore } from "./job-tasks.ts";

/** The extension's id, in capabilities and in a request's declared client capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

/** Whether this request declares the tasks extension (2026-07-28 carries capabilities on every request). */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_KEY] as { extensions?: Record<string, unknown> } | undefined;
  const ext = caps?.extensions?.[TASKS_EXTENSION];
  return typeof ext === "object" && ext !== null && !Array.isArray(ext);
}

function requireDeclared(ctx: ServerContext): void {
  if (declaresTasks(ctx)) return;
  throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, "Missing required client capability", {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

const notFound = (taskId: string) =>
  new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Failed to retrieve task: Task not found (${taskId.slice(0, 200)})`,
  );

/**
 * A cancel this session may not make (another live project's job): the extension's
 * protocol errors are -32602 for a task id the request cannot act on, -32603 only for the
 * server's own faults, so a refusal is Invalid params with the owner named.
 */
const refusedCancel = (message: string, data: Record<string, unknown>) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, message, { reason: "not_owner", ...data });

const taskIdParams = z.object({ taskId: z.string().min(1).max(20_000) }).loose();
const anyResult = z.object({}).loose();

/**
 * tasks/get, tasks/update and tasks/cancel of the 2026-07-28 tasks extension, answered
 * from the job stores. dl never asks the client for input during a task, so tasks/update
 * only acknowledges a task it knows.
 */
export function registerTaskMethods(server: Server, store: JobTaskStore): void {
  const schemas = { params: taskIdParams, result: anyResult };
  server.setRequestHandler("tasks/get", schemas, async ({ taskId }, ctx) => {
    requireDeclared(ctx);
    const task = await store.get(taskId);
    if (!task) throw notFound(taskId);
    return task;
  });
  server.setRequestHandler("tasks/update", schemas, async ({ taskId }, ctx) => {
    requireDeclared(ctx);
    if (!(await store.get(taskId))) throw notFound(taskId);
    return {};
  });
  server.setRequestHandler("tasks/cancel", schemas, async ({ taskId }, ctx) => {
    requireDeclared(ctx);
    let known: boolean;
    try {
      known = await store.cancel(taskId);
    } catch (e) {
      throw isDlError(e, "not_owner") ? refusedCancel(e.message, e.data) : e;
    }
    if (!known) throw notFound(taskId);
    return {};
  });
}
