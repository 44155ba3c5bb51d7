import { type CallToolResult, SdkError, SdkErrorCode, type ServerContext } from "@modelcontextprotocol/server";
import { DlError, type FailureKind } from "../errors.ts";
import { type JobTaskStore, taskIdOf } from "./job-tasks.ts";
import { progressReporter } from "./progress.ts";
import { declaresTasks } from "./task-methods.ts";
import { toolFailure, withFailureKind } from "./tool-result.ts";
import type { ListedTool, ToolSurface } from "./tool-surface.ts";
import type { ToolCall } from "./tool-table.ts";

type CallRequest = { params: { name: string; arguments?: Record<string, unknown> } };

/**
 * The one way a handler runs: whatever it throws, or any error result it returns, goes
 * out with `failure_kind` and its data in `structuredContent` (tool-result.ts).
 */
async function guard(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return withFailureKind(await fn());
  } catch (e) {
    return toolFailure(e);
  }
}

const run = (tool: ListedTool, args: unknown, call: ToolCall) => guard(() => tool.def.handler(args as never, call));

/** A refusal before any handler ran (unknown tool, bad arguments). */
const refused = (text: string, failureKind: FailureKind): CallToolResult =>
  toolFailure(new DlError("bad_input", text, { failure_kind: failureKind }));

/** The text of a refusal the model can act on: which field, what is wrong. */
function invalidArguments(name: string, issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const listed = issues
    .slice(0, 20)
    .map((i) => `${i.path.length ? i.path.map(String).join(".") : "(arguments)"}: ${i.message}`)
    .join("; ");
  return `invalid arguments for ${name}: ${listed}; tools/list gives its input schema`;
}

/** The ids a submit tool's structured answer names. */
function submittedIds(r: CallToolResult): string[] {
  const jobs = (r.structuredContent as { jobs?: { id?: unknown }[] } | undefined)?.jobs ?? [];
  return jobs.map((j) => j.id).filter((id): id is string => typeof id === "string");
}

/**
 * Queues the call's jobs, answering as a submit tool does: a submit tool itself; a long
 * blocking tool through its submit tool, or through its own `queue`.
 */
async function queueJobs(tool: ListedTool, args: unknown, call: ToolCall, surface: ToolSurface) {
  const plan = tool.def.task!;
  if (plan.kind === "submit") return run(tool, args, call);
  if (plan.kind === "queue") return guard(() => plan.queue(args as never, call));
  const submit = surface.tool(plan.submit);
  if (!submit) return run(tool, args, call);
  let tasks: unknown[];
  try {
    tasks = plan.tasks(args as never);
  } catch (e) {
    return toolFailure(e);
  }
  const parsed = submit.input().safeParse({ tasks });
  if (!parsed.success) return refused(invalidArguments(tool.def.name, parsed.error.issues), "invalid_arguments");
  return run(submit, parsed.data, call);
}

/**
 * Whether the call was abandoned by its client (notifications/cancelled), not cut by the
 * server's own end: the SDK aborts every running handler with a ConnectionClosed error
 * when the connection closes, and a closing window keeps its work.
 */
function abandoned(signal: AbortSignal): boolean {
  return signal.aborted && !(signal.reason instanceof SdkError && signal.reason.code === SdkErrorCode.ConnectionClosed);
}

/** The task's name for a call of `tool`: a submit tool's task is its jobs; any other tool is named first. */
const taskToolName = (tool: ListedTool) => (tool.def.task?.kind === "submit" ? null : tool.def.name);

/**
 * The call as an MCP task: the jobs it queued, read back from their store. A refused
 * submit queued nothing, so it answers with the refusal, not a task. Jobs that all end
 * within `inlineMs` answer the call in place, with what their task would have completed
 * with; only work still running becomes a task. A call its client abandons in that time
 * cancels its jobs, as a blocking call does.
 */
async function startTask(
  tool: ListedTool,
  args: unknown,
  call: ToolCall,
  o: { surface: ToolSurface; store: JobTaskStore; inlineMs: number },
): Promise<CallToolResult | Record<string, unknown>> {
  const r = await queueJobs(tool, args, call, o.surface);
  const ids = submittedIds(r);
  if (r.isError || ids.length === 0) return r;
  const taskId = taskIdOf(taskToolName(tool), ids);
  if (o.inlineMs > 0 && (await o.store.settle(taskId, o.inlineMs, call.signal))) {
    const inline = await o.store.result(taskId).catch((e: unknown) => toolFailure(e));
    if (inline) return inline;
  }
  if (abandoned(call.signal)) await o.store.cancel(taskId).catch(() => false);
  const task = await o.store.get(taskId);
  if (!task) {
    const text = `the jobs ${ids.join(" ")} were queued but cannot be read back; poll them with poll_*`;
    return toolFailure(new DlError("storage", text));
  }
  const { result: _, ...seed } = task as typeof task & { result?: unknown };
  return { resultType: "task", ...seed };
}

/**
 * tools/call over the tool table: unknown or unlisted tools and bad arguments get an
 * error result saying what to do; a client that declares the tasks extension gets a
 * task for the tools that have a task plan; every other call answers in place.
 */
export function toolCallHandler(surface: ToolSurface, store: JobTaskStore | undefined, inlineMs = 0) {
  return async (req: CallRequest, ctx: ServerContext): Promise<CallToolResult> => {
    const { name } = req.params;
    const tool = surface.tool(name);
    if (!tool) {
      const why = surface.whyUnlisted(name);
      if (why) return refused(`${name} is not offered by this server: ${why}`, "tool_unlisted");
      const shown = JSON.stringify(name.slice(0, 100));
      return refused(`unknown tool ${shown}; tools/list names the tools this server offers`, "unknown_tool");
    }
    const parsed = tool.input().safeParse(req.params.arguments ?? {});
    if (!parsed.success) return refused(invalidArguments(name, parsed.error.issues), "invalid_arguments");
    const call: ToolCall = { signal: ctx.mcpReq.signal, progress: progressReporter(ctx) };
    if (store && tool.def.task && declaresTasks(ctx)) {
      // The SDK passes a `resultType: "task"` answer through on tools/call.
      return (await startTask(tool, parsed.data, call, { surface, store, inlineMs })) as CallToolResult;
    }
    return run(tool, parsed.data, call);
  };
}
