import { z } from "zod";
import { DlError } from "../../errors.ts";
import { agent } from "../../jobs/providers/agent/index.ts";
import type { ServerDeps } from "../../services.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import { boundedTotal } from "./call-size.ts";
import description from "./delegate-batch.txt" with { type: "text" };
import { delegationInput, sameAsLocalAgentResult } from "./delegation-schema.ts";

export function delegateBatchTool(deps: ServerDeps): ToolDef {
  const max = deps.config.agent.maxBatchSize;
  return defineTool({
    name: "delegate_batch",
    title: "Delegate several agent tasks in parallel",
    description: description.trim().replaceAll("{max}", String(max)),
    input: () =>
      z.object({
        // The configured cap is checked when the call runs (with a message that names the
        // setting); the schema holds the hard maximum and the size bound.
        tasks: boundedTotal(z.array(delegationInput()).min(1).max(64)).describe(
          `1 to ${max} tasks, each like delegate_to_local_agent's arguments`,
        ),
      }),
    output: () =>
      z.object({
        // Each result is delegate_to_local_agent's; the items' schema is not repeated here.
        results: z.array(sameAsLocalAgentResult()),
        succeeded: z.number().int(),
        failed: z.number().int(),
        elapsed_s: z.number(),
      }),
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: agent.facts.name,
    // As a task, each of the tasks is one background agent job.
    task: {
      kind: "background",
      submit: "submit_agent",
      tasks: (args) => withinCap(args.tasks, max),
      answer: async (ids) => (await import("./agent-job-answer.ts")).batchAnswer(deps, ids),
    },
    handler: async ({ tasks }, call) =>
      (await import("./delegate-batch-run.ts")).runBatch(withinCap(tasks, max), deps, call),
  });
}

/** The tasks, if there are at most DELEGATE_MAX_BATCH_SIZE of them (as a call or as a task). */
function withinCap<T>(tasks: T[], max: number): T[] {
  if (tasks.length > max) {
    throw new DlError(
      "bad_input",
      `delegate_batch takes at most ${max} tasks (DELEGATE_MAX_BATCH_SIZE), got ${tasks.length}; split them into several calls`,
    );
  }
  return tasks;
}
