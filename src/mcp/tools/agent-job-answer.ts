import type { CallToolResult } from "@modelcontextprotocol/server";
import { renderResult } from "../../dispatch/render-result.ts";
import { DlError } from "../../errors.ts";
import { agent } from "../../jobs/providers/agent/index.ts";
import { agentJobResult } from "../../jobs/providers/agent/result.ts";
import type { ServerDeps } from "../../services.ts";
import type { JobRow } from "../../store/types.ts";
import { jobTranscriptFile } from "../../usage/transcript-path.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import { type BoundedResult, boundResult } from "../result-spill.ts";
import { toolOk } from "../tool-result.ts";
import { batchResult } from "./batch-result.ts";

/**
 * The completed task of delegate_to_local_agent, delegate_to_provider and delegate_batch:
 * what the blocking call returns, made from the agent jobs the task ran (each job's
 * child printed the very result the blocking call builds in place).
 */
async function endedResults(
  deps: ServerDeps,
  ids: readonly string[],
): Promise<{ rows: JobRow[]; results: BoundedResult[] }> {
  const svc = await deps.jobService(agent);
  const stateDir = deps.config.paths.stateDirs.agent;
  const rows = ids.map((id) => {
    const row = svc.engine.row(id);
    if (!row) throw new DlError("not_found", `no agent job ${id}; it was pruned (DELEGATE_JOB_RETENTION_DAYS)`);
    return row;
  });
  const results = await Promise.all(
    rows.map((row) =>
      boundResult(agentJobResult(row, jobTranscriptFile(stateDir, row.id)), deps.config.paths.cacheDir, row.id),
    ),
  );
  return { rows, results };
}

/** One delegation (delegate_to_local_agent, delegate_to_provider): its job's result. */
export async function delegationAnswer(deps: ServerDeps, ids: readonly string[]): Promise<CallToolResult> {
  const { results } = await endedResults(deps, ids.slice(0, 1));
  const r = results[0]!;
  return toolOk(r, renderResult(r, TEXT_ANSWER_PREVIEW_CHARS));
}

/** delegate_batch: every job's result in task order; its wall time from the first queued to the last ended. */
export async function batchAnswer(deps: ServerDeps, ids: readonly string[]): Promise<CallToolResult> {
  const { rows, results } = await endedResults(deps, ids);
  const start = Math.min(...rows.map((r) => r.created_at));
  const end = Math.max(...rows.map((r) => r.ended_at ?? r.created_at));
  return batchResult(results, end - start);
}
