import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { dshTaskInput } from "../../jobs/providers/dsh-task.ts";
import type { ServerDeps } from "../../services.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { boundedTotal } from "./call-size.ts";
import cancelDshText from "./cancel-dsh.txt" with { type: "text" };
import { cancelOutput, pollOutput, submitOutput } from "./job-schemas.ts";
import pollDshText from "./poll-dsh.txt" with { type: "text" };
import submitDshText from "./submit-dsh.txt" with { type: "text" };

const DSH_PRIVACY =
  "Cloud models take code only: never send PHI or real personal data, in the task or in any file under workdir.";

/** A refusal carries its failure_kind as structured content; job-schemas.ts allows that shape. */
const STRUCTURED_ERRORS = { structuredErrors: true };

/**
 * The three dsh tools. They share one DshService per server, started on first use (it
 * reaps jobs of dead servers on start); if its state cannot be written every tool fails
 * closed with that error and nothing runs.
 */
export function registerDshTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "submit_dsh",
    {
      title: "Submit dsh launcher jobs",
      description: `${submitDshText.trim()} ${DSH_PRIVACY}`,
      inputSchema: { tasks: boundedTotal(z.array(dshTaskInput).min(1).max(256)).describe("tasks to queue") },
      outputSchema: submitOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ tasks }) =>
      guarded(async () => {
        const svc = await deps.dsh();
        const r = await svc.submit(tasks);
        const text = [
          `queued ${r.jobs.length} dsh job(s): ${r.jobs.map((j) => j.id).join(" ")}`,
          r.watch_hint,
          ...r.jobs.flatMap((j) => j.warnings.map((w) => `warning (${j.id}): ${w}`)),
        ].join("\n");
        return toolOk({ ...r }, `${text}\n\n${JSON.stringify(r, null, 2)}`);
      }, STRUCTURED_ERRORS),
  );

  server.registerTool(
    "poll_dsh",
    {
      title: "Poll dsh jobs",
      description: pollDshText.trim(),
      inputSchema: { ids: z.array(z.string().min(1).max(64)).min(1).max(256).describe("job ids (dsh-…)") },
      outputSchema: pollOutput,
      annotations: { readOnlyHint: true },
    },
    ({ ids }) =>
      guarded(async () => {
        const svc = await deps.dsh();
        return toolOk({ ...svc.poll(ids) });
      }),
  );

  server.registerTool(
    "cancel_dsh",
    {
      title: "Cancel a dsh job",
      description: cancelDshText.trim(),
      inputSchema: { id: z.string().min(1).max(64).describe("job id (dsh-…)") },
      outputSchema: cancelOutput,
      annotations: { destructiveHint: true },
    },
    ({ id }) =>
      guarded(async () => {
        const svc = await deps.dsh();
        return toolOk({ ...(await svc.cancel(id)) });
      }),
  );
}
