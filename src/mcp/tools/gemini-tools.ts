import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { geminiTaskInput } from "../../jobs/providers/gemini-task.ts";
import type { ServerDeps } from "../../services.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { boundedTotal } from "./call-size.ts";
import cancelGeminiText from "./cancel-gemini.txt" with { type: "text" };
import delegateToGeminiText from "./delegate-to-gemini.txt" with { type: "text" };
import warningText from "./gemini-warning.txt" with { type: "text" };
import { cancelOutput, geminiJobOutput, pollOutput, submitOutput } from "./job-schemas.ts";
import pollGeminiText from "./poll-gemini.txt" with { type: "text" };
import submitGeminiText from "./submit-gemini.txt" with { type: "text" };

/** A refusal carries its failure_kind as structured content; job-schemas.ts allows that shape. */
const STRUCTURED_ERRORS = { structuredErrors: true };
const WARNING = warningText.trim();
const ids = z.array(z.string().min(1).max(64)).min(1).max(256).describe("job ids (gm-…)");

/**
 * The four Gemini tools, on one GeminiService per server (started on first use). Each one
 * refuses, saying why, unless DELEGATE_GEMINI_ALLOW_DANGER=1: deps.gemini() is the gate.
 */
export function registerGeminiTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "delegate_to_gemini",
    {
      title: "Run a Gemini (agy) task and wait",
      description: `${delegateToGeminiText.trim()} ${WARNING}`,
      inputSchema: geminiTaskInput,
      outputSchema: geminiJobOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    (task, extra) =>
      guarded(async () => {
        const svc = await deps.gemini();
        return toolOk({ ...(await svc.delegate(task, { signal: extra.signal })) });
      }, STRUCTURED_ERRORS),
  );

  server.registerTool(
    "submit_gemini",
    {
      title: "Submit Gemini (agy) jobs",
      description: `${submitGeminiText.trim()} ${WARNING}`,
      inputSchema: { tasks: boundedTotal(z.array(geminiTaskInput).min(1).max(256)).describe("tasks to queue") },
      outputSchema: submitOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ tasks }) =>
      guarded(async () => {
        const svc = await deps.gemini();
        const r = await svc.submit(tasks);
        const text = [
          `queued ${r.jobs.length} Gemini job(s): ${r.jobs.map((j) => j.id).join(" ")}`,
          r.watch_hint,
          ...r.jobs.flatMap((j) => j.warnings.map((w) => `warning (${j.id}): ${w}`)),
        ].join("\n");
        return toolOk({ ...r }, `${text}\n\n${JSON.stringify(r, null, 2)}`);
      }, STRUCTURED_ERRORS),
  );

  server.registerTool(
    "poll_gemini",
    {
      title: "Poll Gemini jobs",
      description: `${pollGeminiText.trim()} Refused unless DELEGATE_GEMINI_ALLOW_DANGER=1.`,
      inputSchema: { ids },
      outputSchema: pollOutput,
      annotations: { readOnlyHint: true },
    },
    ({ ids }) =>
      guarded(async () => {
        const svc = await deps.gemini();
        return toolOk({ ...svc.poll(ids) });
      }, STRUCTURED_ERRORS),
  );

  server.registerTool(
    "cancel_gemini",
    {
      title: "Cancel a Gemini job",
      description: `${cancelGeminiText.trim()} Refused unless DELEGATE_GEMINI_ALLOW_DANGER=1.`,
      inputSchema: { id: z.string().min(1).max(64).describe("job id (gm-…)") },
      outputSchema: cancelOutput,
      annotations: { destructiveHint: true },
    },
    ({ id }) =>
      guarded(async () => {
        const svc = await deps.gemini();
        return toolOk({ ...(await svc.cancel(id)) });
      }, STRUCTURED_ERRORS),
  );
}
