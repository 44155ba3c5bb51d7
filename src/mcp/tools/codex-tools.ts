import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ServerDeps } from "../../services.ts";
import { guarded, toolOk } from "../tool-result.ts";
import { CODEX_CLOUD_WARNING, codexTask, codexTaskFields } from "./codex-schemas.ts";

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
      description: `Runs OpenAI's Codex CLI (codex exec) on the user's ChatGPT subscription in workdir and waits for it; same queue and caps as submit_codex. Returns the job's status, final_response (cut to ~4000 chars, see truncated), usage and session_id. For anything longer than a few minutes use submit_codex. ${CODEX_CLOUD_WARNING}`,
      inputSchema: { ...codexTaskFields, allow_over_quota: z.boolean().optional() },
      annotations: { openWorldHint: true, destructiveHint: true },
    },
    ({ allow_over_quota, ...task }, extra) =>
      guarded(async () => {
        const svc = await deps.codex();
        const view = await svc.delegate(task, { signal: extra.signal, allowOverQuota: allow_over_quota });
        return toolOk({ ...view });
      }),
  );

  server.registerTool(
    "submit_codex",
    {
      title: "Submit Codex CLI jobs",
      description: `Queues one or more Codex runs without waiting and returns their ids at once, plus \`watch\`: start that exact command in the background now (it is the only completion signal), then poll_codex for details. Atomic: every task is checked before any is queued. Caps hold across every server: DELEGATE_CODEX_MAX_CONCURRENT (8) in all, DELEGATE_CODEX_MAX_PER_PROJECT (6) per repository (worktrees share it), one job per worktree; the rest wait FIFO with a queue_reason. ${CODEX_CLOUD_WARNING}`,
      inputSchema: { tasks: z.array(codexTask).min(1).max(256).describe("tasks to queue") },
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
      }),
  );

  server.registerTool(
    "poll_codex",
    {
      title: "Poll Codex jobs",
      description:
        "Status of Codex jobs by id: queued (with queue_reason), running, done (CLI exit 0 — not verification), failed (failure_kind quota/throttle/auth/infra/other), timeout, cancelled, auth_failed, lost, killed_on_restart; with elapsed_s, queued_s, final_response (cut, see truncated), retry_count, retry_in_s, last_activity_age_s, exit_code, session_id, owner, warnings. Jobs of other live servers are shown read-only. Also returns the account state (ok / cooldown / auth_failed) and the effective caps.",
      inputSchema: { ids: z.array(z.string().min(1).max(64)).min(1).max(256).describe("job ids (cx-…)") },
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
      annotations: { destructiveHint: true },
    },
    ({ id }) =>
      guarded(async () => {
        const svc = await deps.codex();
        return toolOk({ ...(await svc.cancel(id)) });
      }),
  );
}
