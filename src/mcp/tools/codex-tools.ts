import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { codexTaskInput } from "../../jobs/providers/codex-task.ts";
import type { ServerDeps } from "../../services.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { boundedTotal } from "./call-size.ts";
import { CODEX_CLOUD_WARNING } from "./codex-schemas.ts";
import delegateToCodexText from "./delegate-to-codex.txt" with { type: "text" };
import { cancelOutput, codexJobOutput, pollOutput, submitOutput } from "./job-schemas.ts";
import pollCodexText from "./poll-codex.txt" with { type: "text" };
import submitCodexText from "./submit-codex.txt" with { type: "text" };

/** A refusal carries its failure_kind as structured content; job-schemas.ts allows that shape. */
const STRUCTURED_ERRORS = { structuredErrors: true };

/**
 * The four Codex tools. They share one CodexService per server, started once (it reaps
 * jobs of dead servers on start); if its state cannot be written every tool fails closed
 * with that error and nothing runs.
 */
export function registerCodexTools(server: McpServer, deps: ServerDeps): void {
  server.registerTool(
    "delegate_to_codex",
    {
      title: "Run a Codex CLI task and wait",
      description: `${delegateToCodexText.trim()} ${CODEX_CLOUD_WARNING}`,
      inputSchema: codexTaskInput,
      outputSchema: codexJobOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ allow_over_quota, ...task }, extra) =>
      guarded(async () => {
        const svc = await deps.codex();
        const view = await svc.delegate(task, { signal: extra.signal, allowOverQuota: allow_over_quota });
        return toolOk({ ...view });
      }, STRUCTURED_ERRORS),
  );

  server.registerTool(
    "submit_codex",
    {
      title: "Submit Codex CLI jobs",
      description: `${submitCodexText.trim()} ${CODEX_CLOUD_WARNING}`,
      inputSchema: { tasks: boundedTotal(z.array(codexTaskInput).min(1).max(256)).describe("tasks to queue") },
      outputSchema: submitOutput,
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ tasks }) =>
      guarded(async () => {
        const svc = await deps.codex();
        const r = await svc.submit(tasks);
        const text = [
          `queued ${r.jobs.length} Codex job(s): ${r.jobs.map((j) => j.id).join(" ")}`,
          r.watch_hint,
          ...r.jobs.flatMap((j) => j.warnings.map((w) => `warning (${j.id}): ${w}`)),
        ].join("\n");
        return toolOk({ ...r }, `${text}\n\n${JSON.stringify(r, null, 2)}`);
      }, STRUCTURED_ERRORS),
  );

  server.registerTool(
    "poll_codex",
    {
      title: "Poll Codex jobs",
      description: pollCodexText.trim(),
      inputSchema: { ids: z.array(z.string().min(1).max(64)).min(1).max(256).describe("job ids (cx-…)") },
      outputSchema: pollOutput,
      annotations: { readOnlyHint: true },
    },
    ({ ids }) =>
      guarded(async () => {
        const svc = await deps.codex();
        return toolOk({ ...svc.poll(ids) });
      }),
  );

  server.registerTool(
    "cancel_codex",
    {
      title: "Cancel a Codex job",
      description:
        "Dequeues a queued job or kills the process group of a running one; it ends cancelled with its slots released. A finished job is left as it is.",
      inputSchema: { id: z.string().min(1).max(64).describe("job id (cx-…)") },
      outputSchema: cancelOutput,
      annotations: { destructiveHint: true },
    },
    ({ id }) =>
      guarded(async () => {
        const svc = await deps.codex();
        return toolOk({ ...(await svc.cancel(id)) });
      }),
  );
}
