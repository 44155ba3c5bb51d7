import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { CancelResult, SubmitResult } from "../../jobs/engine/engine.ts";
import { cancelOutput, codexPollOutput, codexSubmitOutput, pollOutput, submitOutput } from "../../jobs/tool-schemas.ts";
import { toolOk } from "../tool-result.ts";
import { type Backend, defineTool, type ToolDef } from "../tool-table.ts";
import { boundedTotal } from "./call-size.ts";

/** What the three job tools of one provider need from its service. */
interface JobToolService {
  submit(tasks: readonly unknown[]): Promise<SubmitResult>;
  poll(ids: readonly string[]): { jobs: readonly unknown[] } | Promise<{ jobs: readonly unknown[] }>;
  cancel(id: string): Promise<CancelResult>;
}

export interface JobToolSpec {
  /** "codex", "gemini", "dsh", "agent": the tools are submit_<kind>, poll_<kind> and cancel_<kind>. */
  kind: Backend;
  /** For people, in titles and the submit line: "Codex", "Gemini (agy)", "dsh", "agent". */
  label: string;
  /** Job id prefix ("cx-"), shown in the id fields' descriptions. */
  idPrefix: string;
  /** The provider's one task schema; submit bounds the list and its total size. */
  task: () => z.ZodType;
  maxTasks: number;
  descriptions: { submit: string; poll: string; cancel: string };
  /** Codex's submit and poll also show its account (state, cooldown, caps). */
  withAccount?: boolean;
  /** The service, started on first use; throws (DlError) to refuse, e.g. behind a gate. */
  service: () => Promise<JobToolService>;
}

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
 * What a completed submit task answers: its jobs as poll_<kind> shows them once ended, a
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
 * submit_<kind>, poll_<kind> and cancel_<kind>, the same for every job provider: they
 * share one service per server, started on first use (it reaps jobs of dead servers on
 * start); if its state cannot be written every tool fails closed with that error.
 */
export function jobTools(s: JobToolSpec): ToolDef[] {
  const submit = defineTool({
    name: `submit_${s.kind}`,
    title: `Submit ${s.label} jobs`,
    description: s.descriptions.submit,
    // Strict: a task's field given beside `tasks` (allow_over_quota, say) is refused, not dropped.
    input: () =>
      z.object({ tasks: boundedTotal(z.array(s.task()).min(1).max(s.maxTasks)).describe("tasks to queue") }).strict(),
    output: s.withAccount ? codexSubmitOutput : submitOutput,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: s.kind,
    task: { kind: "submit", answer: async (ids) => endedJobsResult(await (await s.service()).poll(ids)) },
    handler: async ({ tasks }) => submittedResult(s.label, await (await s.service()).submit(tasks)),
  });
  const poll = defineTool({
    name: `poll_${s.kind}`,
    title: `Poll ${s.label} jobs`,
    description: s.descriptions.poll,
    input: () =>
      z.object({ ids: z.array(z.string().min(1).max(64)).min(1).max(256).describe(`job ids (${s.idPrefix}…)`) }),
    output: s.withAccount ? codexPollOutput : pollOutput,
    annotations: { readOnlyHint: true },
    backend: s.kind,
    handler: async ({ ids }) => toolOk({ ...(await (await s.service()).poll(ids)) }),
  });
  const cancel = defineTool({
    name: `cancel_${s.kind}`,
    title: `Cancel one ${s.label} job`,
    description: s.descriptions.cancel,
    input: () => z.object({ id: z.string().min(1).max(64).describe(`job id (${s.idPrefix}…)`) }),
    output: cancelOutput,
    annotations: { destructiveHint: true },
    backend: s.kind,
    handler: async ({ id }) => toolOk({ ...(await (await s.service()).cancel(id)) }),
  });
  return [submit, poll, cancel];
}
