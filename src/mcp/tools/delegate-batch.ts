import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { delegationContext } from "../../dispatch/delegation-context.ts";
import { renderResult } from "../../dispatch/render-result.ts";
import { type PreparedDelegation, prepareDelegation, runPrepared } from "../../dispatch/run-delegation.ts";
import { DlError } from "../../errors.ts";
import type { ServerDeps } from "../../services.ts";
import { progressReporter } from "../progress.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { delegationInput, delegationResultSchema, normalizeTurns } from "./delegation-schema.ts";

export function registerDelegateBatch(server: McpServer, deps: ServerDeps): void {
  const max = deps.config.agent.maxBatchSize;
  server.registerTool(
    "delegate_batch",
    {
      title: "Delegate several agent tasks in parallel",
      description: `Runs up to ${max} agent tasks at once (DELEGATE_MAX_BATCH_SIZE). Every task is checked (agent found, workdir valid) before any starts; then they run concurrently and results come back in input order, each with its own success and error, so one failure does not fail the others. elapsed_s is about the slowest task. Reuse one agent_name across tasks of the same kind: backends cache the shared prompt prefix. Give each task its own worktree when they edit files.`,
      inputSchema: {
        tasks: z
          .array(delegationInput)
          .min(1)
          .describe(`1 to ${max} tasks, each like delegate_to_local_agent's arguments`),
      },
      outputSchema: {
        results: z.array(delegationResultSchema),
        succeeded: z.number().int(),
        failed: z.number().int(),
        elapsed_s: z.number(),
      },
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ tasks }, extra) =>
      guarded(async () => {
        const started = performance.now();
        const prepared = await prepareAll(tasks, max, deps);
        const progress = progressReporter(extra);
        const done = new Array<boolean>(tasks.length).fill(false);
        const results = await Promise.all(
          prepared.map(async (p, i) => {
            const r = await runPrepared(
              p,
              delegationContext(deps, {
                signal: extra.signal,
                onProgress: (_turn, _max, message) =>
                  progress(done.filter(Boolean).length, tasks.length, `task ${i}: ${message}`),
              }),
            );
            done[i] = true;
            progress(
              done.filter(Boolean).length,
              tasks.length,
              `task ${i} finished (${r.success ? "success" : "failed"})`,
            );
            return r;
          }),
        );
        const succeeded = results.filter((r) => r.success).length;
        const structured = {
          results,
          succeeded,
          failed: results.length - succeeded,
          elapsed_s: Math.round((performance.now() - started) / 100) / 10,
        };
        const text = [
          `${succeeded}/${results.length} tasks succeeded in ${structured.elapsed_s} s`,
          ...results.map((r, i) => `\n### task ${i}\n${renderResult(r)}`),
        ].join("\n");
        return toolOk(structured, text);
      }),
  );
}

/**
 * All-or-nothing validation: a bad task (or too many) throws before any task starts, so
 * none is left half-started.
 */
async function prepareAll(
  tasks: z.infer<typeof delegationInput>[],
  max: number,
  deps: ServerDeps,
): Promise<PreparedDelegation[]> {
  if (tasks.length > max) {
    throw new DlError(
      "bad_input",
      `delegate_batch takes at most ${max} tasks (DELEGATE_MAX_BATCH_SIZE), got ${tasks.length}; split them into several calls`,
    );
  }
  const prepared: PreparedDelegation[] = [];
  for (const [i, t] of tasks.entries()) {
    try {
      prepared.push(
        await prepareDelegation({ ...t, max_turns: normalizeTurns(t.max_turns) }, deps.config, deps.settings),
      );
    } catch (e) {
      const why = e instanceof DlError ? e.message : String(e);
      throw new DlError("bad_input", `task ${i} (${t.agent_name}) is invalid, so no task was started: ${why}`);
    }
  }
  return prepared;
}
