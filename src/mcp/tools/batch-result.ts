import type { CallToolResult } from "@modelcontextprotocol/server";
import { renderResult } from "../../dispatch/render-result.ts";
import { TEXT_ANSWER_PREVIEW_CHARS } from "../result-limits.ts";
import type { BoundedResult } from "../result-spill.ts";
import { toolOk } from "../tool-result.ts";

/**
 * What delegate_batch answers, run in place or as a task: each task's result in input
 * order, how many succeeded, and the batch's wall time. The text part shares one preview
 * budget across the tasks, so it stays short.
 */
export function batchResult(results: BoundedResult[], elapsedMs: number): CallToolResult {
  const succeeded = results.filter((r) => r.success).length;
  const structured = {
    results,
    succeeded,
    failed: results.length - succeeded,
    elapsed_s: Math.round(elapsedMs / 100) / 10,
  };
  const previewChars = Math.max(500, Math.floor(TEXT_ANSWER_PREVIEW_CHARS / results.length));
  const text = [
    `${succeeded}/${results.length} tasks succeeded in ${structured.elapsed_s} s`,
    ...results.map((r, i) => `\n### task ${i + 1}\n${renderResult(r, previewChars)}`),
  ].join("\n");
  return toolOk(structured, text);
}
