import { CODEX_CLOUD_WARNING } from "../../jobs/providers/codex/codex-warning.ts";
import delegateToCodexText from "../../jobs/providers/codex/delegate-to-codex.txt" with { type: "text" };
import pollCodexText from "../../jobs/providers/codex/poll-codex.txt" with { type: "text" };
import submitCodexText from "../../jobs/providers/codex/submit-codex.txt" with { type: "text" };
import { codexTaskInput } from "../../jobs/providers/codex/task.ts";
import { codexJobOutput } from "../../jobs/tool-schemas.ts";
import type { ServerDeps } from "../../services.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import { jobTools } from "./job-tools.ts";

/**
 * The four Codex tools: delegate_to_codex here, the job trio from job-tools.ts. They share
 * one CodexService per server, started once (it reaps jobs of dead servers on start).
 */
export function codexTools(deps: ServerDeps): ToolDef[] {
  const delegate = defineTool({
    name: "delegate_to_codex",
    title: "Run a Codex CLI task and wait",
    description: `${delegateToCodexText.trim()} A cloud model: never personal or health data.`,
    input: codexTaskInput,
    output: codexJobOutput,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: "codex",
    // As a task, the same call is one submit_codex job.
    task: {
      kind: "background",
      submit: "submit_codex",
      tasks: (args) => [args],
      answer: async ([id]) => toolOk({ ...(await deps.codex()).ended(id!) }),
    },
    handler: async ({ allow_over_quota, ...task }, call) => {
      const svc = await deps.codex();
      const view = await svc.delegate(task, { signal: call.signal, allowOverQuota: allow_over_quota });
      return toolOk({ ...view });
    },
  });
  return [
    delegate,
    ...jobTools({
      kind: "codex",
      label: "Codex",
      idPrefix: "cx-",
      task: codexTaskInput,
      maxTasks: 256,
      descriptions: {
        submit: `${submitCodexText.trim()} ${CODEX_CLOUD_WARNING}`,
        poll: pollCodexText.trim(),
        cancel:
          "Cancels one Codex job: drops it from the queue, or kills the Codex CLI's process group. An ended job is left as it is.",
      },
      withAccount: true,
      service: deps.codex,
    }),
  ];
}
