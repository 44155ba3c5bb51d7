import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { ProgressReporter } from "./progress.ts";

/**
 * The backend a tool needs: a job provider's name (PROVIDERS). The gateway's tools belong
 * to the agent provider's (jobs/providers/agent), whose loop runs in process. A backend
 * that cannot run on this machine lists none of its tools (tool-availability.ts).
 */
export type Backend = string;

/** What a handler gets besides its arguments. */
export interface ToolCall {
  /** Aborted when the client cancels the call or the server stops. */
  signal: AbortSignal;
  /** notifications/progress when the client asked for them; a no-op otherwise. */
  progress: ProgressReporter;
}

/**
 * What a completed task of a tool answers, from the ids of the jobs it queued (all of
 * them ended): exactly what the blocking call returns, with the same structuredContent
 * (valid against the tool's output schema) and the same isError. Read from the job
 * stores, so any server of the machine gives the same answer.
 */
export type TaskAnswer = (ids: readonly string[]) => Promise<CallToolResult>;

/**
 * How a call becomes an MCP task (the `io.modelcontextprotocol/tasks` extension) for a
 * client that declares it: a submit tool's task is the jobs it queued; a long blocking
 * tool runs the same work as background jobs of `submit` (its `tasks` turns the
 * arguments into that tool's task list), or, when its arguments hold what a submit tool
 * must not take (delegate_to_provider's key), queues its jobs itself with `queue`, which
 * answers as a submit tool does. `answer` makes the completed task's result. A tool with
 * no plan always answers in place.
 */
type TaskPlan<A> =
  | { kind: "submit"; answer: TaskAnswer }
  | { kind: "background"; submit: string; tasks: (args: A) => unknown[]; answer: TaskAnswer }
  | { kind: "queue"; queue: (args: A, call: ToolCall) => Promise<CallToolResult>; answer: TaskAnswer };

/**
 * One tool, defined once: what tools/list says about it, what it needs, what it does.
 * Schemas are functions, built on first use (a tool that is never listed or called never
 * builds one); the server converts and keeps its JSON Schema once.
 */
export interface ToolDef<A = Record<string, unknown>> {
  name: string;
  title: string;
  /** The tool's .txt, trimmed; what a host's tool search matches. */
  description: string;
  input: () => z.ZodType<A> & z.ZodObject;
  output: () => z.ZodObject;
  annotations: ToolAnnotations;
  backend: Backend;
  task?: TaskPlan<A>;
  handler: (args: A, call: ToolCall) => Promise<CallToolResult>;
}

/** Types a definition by its input schema, and erases that type for the table. */
export function defineTool<S extends z.ZodObject>(def: ToolDef<z.output<S>> & { input: () => S }): ToolDef {
  return def as unknown as ToolDef;
}
