import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import { describeError } from "../errors.ts";
import type { JobTaskStore } from "./job-tasks.ts";
import { progressReporter } from "./progress.ts";
import { declaresTasks } from "./task-methods.ts";
import type { ListedTool, ToolSurface } from "./tool-surface.ts";
import type { ToolCall } from "./tool-table.ts";

type CallRequest = { params: { name: string; arguments?: Record<string, unknown> } };

const failed = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] });

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
 * The call as an MCP task: a submit tool queues its jobs; a long blocking tool queues the
 * same work as background jobs of its submit tool. A refused submit queued nothing, so
 * it answers with the refusal, not a task.
 */
async function startTask(
  tool: ListedTool,
  args: unknown,
  call: ToolCall,
  surface: ToolSurface,
  store: JobTaskStore,
): Promise<CallToolResult | Record<string, unknown>> {
  const plan = tool.def.task!;
  let submit = tool;
  let submitArgs = args;
  if (plan.kind === "background") {
    const found = surface.tool(plan.submit);
    if (!found) return tool.def.handler(args as never, call);
    let tasks: unknown[];
    try {
      tasks = plan.tasks(args as never);
    } catch (e) {
      return failed(describeError(e));
    }
    const parsed = found.input().safeParse({ tasks });
    if (!parsed.success) return failed(invalidArguments(tool.def.name, parsed.error.issues));
    submit = found;
    submitArgs = parsed.data;
  }
  const r = await submit.def.handler(submitArgs as never, call);
  const ids = submittedIds(r);
  if (r.isError || ids.length === 0) return r;
  const task = await store.get(ids.join(","));
  if (!task) return failed(`the jobs ${ids.join(" ")} were queued but cannot be read back; poll them with poll_*`);
  const { result: _, ...seed } = task as typeof task & { result?: unknown };
  return { resultType: "task", ...seed };
}

/**
 * tools/call over the tool table: unknown or unlisted tools and bad arguments get an
 * error result saying what to do; a client that declares the tasks extension gets a
 * task for the tools that have a task plan; every other call answers in place.
 */
export function toolCallHandler(surface: ToolSurface, store: JobTaskStore | undefined) {
  return async (req: CallRequest, ctx: ServerContext): Promise<CallToolResult> => {
    const { name } = req.params;
    const tool = surface.tool(name);
    if (!tool) {
      const why = surface.whyUnlisted(name);
      return failed(
        why
          ? `${name} is not offered by this server: ${why}`
          : `unknown tool ${JSON.stringify(name.slice(0, 100))}; tools/list names the tools this server offers`,
      );
    }
    const parsed = tool.input().safeParse(req.params.arguments ?? {});
    if (!parsed.success) return failed(invalidArguments(name, parsed.error.issues));
    const call: ToolCall = { signal: ctx.mcpReq.signal, progress: progressReporter(ctx) };
    if (store && tool.def.task && declaresTasks(ctx)) {
      // The SDK passes a `resultType: "task"` answer through on tools/call.
      return (await startTask(tool, parsed.data, call, surface, store)) as CallToolResult;
    }
    return tool.def.handler(parsed.data as never, call);
  };
}
