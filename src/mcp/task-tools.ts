import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolRequest, CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { JobTaskStore } from "./job-tasks.ts";

/**
 * Lets the submit tools run as MCP tasks for clients that ask for one, and leaves them
 * exactly as they are for clients that do not.
 *
 * The SDK's experimental API (registerToolTask, taskSupport "optional") would make a
 * plain call wait for the whole task: it polls until the jobs end, which is the blocking
 * this design exists to avoid. So the tools stay registered as they are and are upgraded
 * here: their handler becomes a task handler (createTask submits and answers with the
 * task), and the SDK's path for a plain call to a task tool runs the original handler.
 * Both hooks are SDK internals of 1.32.x; `upgradeSubmitTools` checks they exist and
 * throws at start otherwise, so an SDK change fails loudly, not silently.
 */

type ToolCallback = (args: unknown, extra: unknown) => Promise<CallToolResult>;
interface SdkInternals {
  _registeredTools: Record<string, RegisteredTool>;
  handleAutomaticTaskPolling: (tool: RegisteredTool, request: CallToolRequest, extra: unknown) => Promise<unknown>;
  validateToolInput: (tool: RegisteredTool, args: unknown, name: string) => Promise<unknown>;
}

/** The ids a submit tool's structured answer names. */
function submittedIds(r: CallToolResult): string[] {
  const jobs = (r.structuredContent as { jobs?: { id?: unknown }[] } | undefined)?.jobs ?? [];
  return jobs.map((j) => j.id).filter((id): id is string => typeof id === "string");
}

export function upgradeSubmitTools(server: McpServer, names: readonly string[], store: JobTaskStore): void {
  const sdk = server as unknown as SdkInternals;
  if (
    typeof sdk._registeredTools !== "object" ||
    typeof sdk.handleAutomaticTaskPolling !== "function" ||
    typeof sdk.validateToolInput !== "function"
  ) {
    throw new Error(
      "this @modelcontextprotocol/sdk has no experimental task hooks dl knows; MCP tasks cannot be offered",
    );
  }
  const plain = new Map<string, ToolCallback>();
  for (const name of names) {
    const tool = sdk._registeredTools[name];
    if (!tool) throw new Error(`upgradeSubmitTools: no tool ${name}`);
    const callback = tool.handler as unknown as ToolCallback;
    plain.set(name, callback);
    tool.execution = { taskSupport: "optional" };
    tool.handler = {
      createTask: async (args: unknown, extra: unknown) => {
        const r = await callback(args, extra);
        const ids = submittedIds(r);
        // A refused submit queued nothing: there is no task, only the refusal.
        if (r.isError || ids.length === 0) {
          const text = r.content.find((c) => c.type === "text");
          throw new McpError(ErrorCode.InvalidParams, text && "text" in text ? text.text : "the submit was refused");
        }
        return { task: await store.taskFor(ids) };
      },
      getTask: async (_args: unknown, extra: { taskId: string }) => store.getTask(extra.taskId),
      getTaskResult: async (_args: unknown, extra: { taskId: string }) => store.getTaskResult(extra.taskId),
    } as unknown as RegisteredTool["handler"];
  }
  const polling = sdk.handleAutomaticTaskPolling.bind(server);
  sdk.handleAutomaticTaskPolling = async (tool, request, extra) => {
    const callback = plain.get(request.params.name);
    if (!callback) return polling(tool, request, extra);
    // A client that did not ask for a task gets today's answer: ids and `watch`, at once.
    const args = await sdk.validateToolInput.call(server, tool, request.params.arguments, request.params.name);
    return callback(args, extra);
  };
}
