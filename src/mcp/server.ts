import { Server } from "@modelcontextprotocol/server";
import type { ServerDeps } from "../services.ts";
import { JobTaskStore } from "./job-tasks.ts";
import { noElicitationValidator } from "./no-elicitation.ts";
import { registerTaskMethods, TASKS_EXTENSION } from "./task-methods.ts";
import { toolCallHandler } from "./tool-call.ts";
import { ToolSurface } from "./tool-surface.ts";

/** A protocol era, as the SDK's serving entries name them: 2026-07-28 is "modern". */
export type Era = "legacy" | "modern";

const INSTRUCTIONS =
  "dl hands sub-agent work to other model backends and coding CLIs. delegate_to_local_agent / delegate_batch run agents on the configured gateway, delegate_to_provider on an endpoint you name; submit_* / poll_* / cancel_* run background jobs (Codex CLI, DeepSeek-harness dsh, Gemini through agy, agents): start the returned `watch` command in the background, it is the completion signal. list_local_agents shows agents, local_backend_status checks the gateway. Only the backends that can run on this machine have tools.";

/**
 * One MCP server instance for one connection of either era, over the process's one tool
 * surface. Transport-agnostic: `dl serve` hands this factory to `serveStdio`, tests and
 * `dl serve --check` may connect an instance to an in-memory pair. On 2026-07-28 it also
 * offers the tasks extension (tasks/get, tasks/update, tasks/cancel over the job stores).
 */
export function createServer(deps: ServerDeps, era: Era = "legacy", surface = new ToolSurface(deps)): Server {
  const modern = era === "modern";
  const server = new Server(
    { name: "delegate-local", title: "dl — delegate to other backends", version: deps.version },
    {
      capabilities: { tools: {}, logging: {}, ...(modern ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) },
      jsonSchemaValidator: noElicitationValidator,
      instructions: INSTRUCTIONS,
    },
  );
  const store = modern ? new JobTaskStore(deps, (name, provider) => surface.taskAnswer(name, provider)) : undefined;
  server.setRequestHandler("tools/list", () => ({ tools: surface.toolsList() }));
  server.setRequestHandler("tools/call", toolCallHandler(surface, store, deps.config.tasks.inlineS * 1000));
  if (store) registerTaskMethods(server, store);
  return server;
}

/** What `serveStdio` calls for each connection (and for a discarded `server/discover` probe). */
export function serverFactory(deps: ServerDeps, onServer: (s: Server) => void = () => {}) {
  const surface = new ToolSurface(deps);
  return ({ era }: { era: Era }): Server => {
    const server = createServer(deps, era, surface);
    onServer(server);
    return server;
  };
}
