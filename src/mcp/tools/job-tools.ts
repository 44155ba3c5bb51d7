import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { SubmitResult } from "../../jobs/engine/engine.ts";
import type { ProviderModule } from "../../jobs/provider-module.ts";
import { cancelOutput, pollOutput, submitOutput } from "../../jobs/tool-schemas.ts";
import type { ServerDeps } from "../../services.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import { boundedTotal } from "./call-size.ts";

/** What a submit answers: the ids, the watch command and any warnings, then the whole result. */
export function submittedResult(label: string, r: SubmitResult): CallToolResult {
  const text = [
    `queued ${r.jobs.length} ${label} job(s): ${r.jobs.map((j) => j.id).join(" ")}`,
    r.watch_hint,
    ...r.jobs.flatMap((j) => j.warnings.map((w) => `warning (${j.id}): ${w}`)),
  ].join("\n");
  return toolOk({ ...r }, `${text}\n\n${JSON.stringify(r, null, 2)}`);
}

/**
 * What a completed submit task answers: its jobs as poll_<name> shows them once ended, a
 * tool error (isError) when any of them did not end `done`.
 */
export function endedJobsResult(polled: { jobs: readonly unknown[] }): CallToolResult {
  const statuses = polled.jobs.map((j) => (j as { status?: unknown }).status);
  const counts = new Map<unknown, number>();
  for (const st of statuses) counts.set(st, (counts.get(st) ?? 0) + 1);
  const summary = [...counts].map(([st, n]) => `${n} ${String(st)}`).join(", ");
  const result = toolOk({ ...polled }, `${summary}\n\n${JSON.stringify(polled, null, 2)}`);
  return statuses.every((st) => st === "done") ? result : { ...result, isError: true };
}

/**
 * The refusal of a field given beside `tasks`: where it is a field of a task, the model
 * is told to put it inside each task it is meant for (it was dropped once, silently).
 */
function besideTasks(task: z.ZodType) {
  const fields = task instanceof z.ZodObject ? Object.keys(task.shape) : [];
  return (issue: { code?: string; keys?: string[] }) => {
    if (issue.code !== "unrecognized_keys" || !issue.keys?.length) return undefined;
    const own = issue.keys.filter((k) => fields.includes(k));
    if (!own.length) return `unknown field ${issue.keys.join(", ")}: only tasks goes here`;
    return `${own.join(", ")} is a field of each task, not of the call: put it inside the task it is for (tasks[0].${own[0]})`;
  };
}

/**
 * One provider's tools, the same for every job provider: submit_<name>, poll_<name> and
 * cancel_<name>, and delegate_to_<name> when its module has one. They share one service
 * per server, started on first use (it reaps jobs of dead servers on start); if its state
 * cannot be written, or its gate refuses, every tool fails closed with that error.
 */
export function jobTools(deps: ServerDeps, m: ProviderModule): ToolDef[] {
  const { name, label, idPrefix } = m.facts;
  const t = m.tools;
  const service = () => deps.jobService(m);
  const submit = defineTool({
    name: `submit_${name}`,
    title: `Submit ${label} jobs`,
    description: t.descriptions.submit,
    // Strict: a task's field given beside `tasks` (allow_over_quota, say) is refused, not dropped.
    input: () =>
      z
        .object(
          { tasks: boundedTotal(z.array(t.task()).min(1).max(t.maxTasks)).describe("tasks to queue") },
          { error: besideTasks(t.task()) },
        )
        .strict(),
    output: t.submitOutput ?? submitOutput,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: name,
    task: { kind: "submit", answer: async (ids) => endedJobsResult(await (await service()).poll(ids)) },
    handler: async ({ tasks }) => submittedResult(label, await (await service()).submit(tasks)),
  });
  const poll = defineTool({
    name: `poll_${name}`,
    title: `Poll ${label} jobs`,
    description: t.descriptions.poll,
    input: () =>
      z.object({ ids: z.array(z.string().min(1).max(64)).min(1).max(256).describe(`job ids (${idPrefix}…)`) }),
    output: t.pollOutput ?? pollOutput,
    annotations: { readOnlyHint: true },
    backend: name,
    handler: async ({ ids }) => toolOk({ ...(await (await service()).poll(ids)) }),
  });
  const cancel = defineTool({
    name: `cancel_${name}`,
    title: `Cancel one ${label} job`,
    description: t.descriptions.cancel,
    input: () => z.object({ id: z.string().min(1).max(64).describe(`job id (${idPrefix}…)`) }),
    output: cancelOutput,
    annotations: { destructiveHint: true },
    backend: name,
    handler: async ({ id }) => toolOk({ ...(await (await service()).cancel(id)) }),
  });
  return [...delegateTool(deps, m), submit, poll, cancel];
}

/**
 * delegate_to_<name>: one task through the same queue, waited for. As an MCP task it is
 * one submit_<name> job, whose completed result is what the blocking call returns.
 */
function delegateTool(deps: ServerDeps, m: ProviderModule): ToolDef[] {
  const d = m.tools.delegate;
  if (!d) return [];
  const name = m.facts.name;
  const service = () => deps.jobService(m);
  return [
    defineTool({
      name: `delegate_to_${name}`,
      title: d.title,
      description: d.description,
      input: d.input,
      output: d.output,
      annotations: { openWorldHint: true, destructiveHint: true },
      backend: name,
      task: {
        kind: "background",
        submit: `submit_${name}`,
        tasks: (args) => [args],
        answer: async ([id]) => toolOk({ ...(await service()).ended(id!) }),
      },
      handler: async (task, call) => toolOk({ ...(await (await service()).delegate(task, { signal: call.signal })) }),
    }),
  ];
}
