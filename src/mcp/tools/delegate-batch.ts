import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import {
  type DelegationResult,
  type PreparedDelegation,
  prepareDelegation,
  runPrepared,
} from "../../dispatch/run-delegation.ts";
import { DlError } from "../../errors.ts";
import type { ServerDeps } from "../../services.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import { boundResult } from "../result-spill.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { defineTool, type ToolCall, type ToolDef } from "../tool-table.ts";
import { boundedTotal } from "./call-size.ts";
import description from "./delegate-batch.txt" with { type: "text" };
import { type DelegationArgs, delegationInput, delegationResultSchema, normalizeTurns } from "./delegation-schema.ts";

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
        results: z.array(delegationResultSchema()),
        succeeded: z.number().int(),
        failed: z.number().int(),
        elapsed_s: z.number(),
      }),
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: "agent",
    // As a task, each of the tasks is one background agent job.
    task: { kind: "background", submit: "submit_agent", tasks: (args) => withinCap(args.tasks, max) },
    handler: ({ tasks }, call) => guarded(() => runBatch(tasks, deps, call)),
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

async function runBatch(all: DelegationArgs[], deps: ServerDeps, call: ToolCall): Promise<CallToolResult> {
  const tasks = withinCap(all, deps.config.agent.maxBatchSize);
  const started = performance.now();
  const prepared = await prepareAll(tasks, deps);
  const cacheDir = deps.config.paths.cacheDir;
  const results = await Promise.all((await runAll(prepared, deps, call)).map((r) => boundResult(r, cacheDir)));
  const succeeded = results.filter((r) => r.success).length;
  const structured = {
    results,
    succeeded,
    failed: results.length - succeeded,
    elapsed_s: Math.round((performance.now() - started) / 100) / 10,
  };
  // The text part shares one preview budget across the tasks, so it stays short.
  const previewChars = Math.max(500, Math.floor(TEXT_ANSWER_PREVIEW_CHARS / results.length));
  const text = [
    `${succeeded}/${results.length} tasks succeeded in ${structured.elapsed_s} s`,
    ...results.map((r, i) => `\n### task ${i + 1}\n${renderResult(r, previewChars)}`),
  ].join("\n");
  return toolOk(structured, text);
}

/** All-or-nothing validation: a bad task must not leave the others half-started. */
async function prepareAll(tasks: DelegationArgs[], deps: ServerDeps): Promise<PreparedDelegation[]> {
  const prepared: PreparedDelegation[] = [];
  for (const [i, t] of tasks.entries()) {
    try {
      prepared.push(
        await prepareDelegation({ ...t, max_turns: normalizeTurns(t.max_turns) }, deps.config, deps.settings),
      );
    } catch (e) {
      // Numbered from 1, as the submit_* tools number their tasks.
      const why = e instanceof DlError ? e.message : String(e);
      throw new DlError("bad_input", `task ${i + 1} (${t.agent_name}) is invalid, so no task was started: ${why}`);
    }
  }
  return prepared;
}

/** Runs every task at once; results keep the input order, progress counts finished tasks. */
async function runAll(prepared: PreparedDelegation[], deps: ServerDeps, call: ToolCall): Promise<DelegationResult[]> {
  const progress = call.progress;
  const total = prepared.length;
  const done = new Array<boolean>(total).fill(false);
  const finished = () => done.filter(Boolean).length;
  const results = await Promise.all(
    prepared.map(async (p, i) => {
      const r = await runPrepared(
        p,
        delegationContext(deps, {
          signal: call.signal,
          onProgress: (_turn, _max, message) => progress(finished(), total, `task ${i + 1}: ${message}`),
        }),
      );
      done[i] = true;
      progress(finished(), total, `task ${i + 1} finished (${r.success ? "success" : "failed"})`);
      return r;
    }),
  );
  await progress.settle();
  return results;
}
