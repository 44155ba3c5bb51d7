import cancelGeminiText from "../../jobs/providers/gemini/cancel-gemini.txt" with { type: "text" };
import delegateToGeminiText from "../../jobs/providers/gemini/delegate-to-gemini.txt" with { type: "text" };
import warningText from "../../jobs/providers/gemini/gemini-warning.txt" with { type: "text" };
import pollGeminiText from "../../jobs/providers/gemini/poll-gemini.txt" with { type: "text" };
import submitGeminiText from "../../jobs/providers/gemini/submit-gemini.txt" with { type: "text" };
import { geminiTaskInput } from "../../jobs/providers/gemini/task.ts";
import { geminiJobOutput } from "../../jobs/tool-schemas.ts";
import type { ServerDeps } from "../../services.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import { jobTools } from "./job-tools.ts";

const WARNING = warningText.trim();

/**
 * The four Gemini tools, on one GeminiService per server (started on first use). Each one
 * refuses, saying why, unless DELEGATE_GEMINI_ALLOW_DANGER=1: deps.gemini() is the gate. The privacy
 * warning is said once, on submit_gemini; delegate_to_gemini points to its rules.
 */
export function geminiTools(deps: ServerDeps): ToolDef[] {
  const delegate = defineTool({
    name: "delegate_to_gemini",
    title: "Run a Gemini (agy) task and wait",
    description: delegateToGeminiText.trim(),
    input: geminiTaskInput,
    output: geminiJobOutput,
    annotations: { openWorldHint: true, destructiveHint: true },
    backend: "gemini",
    task: {
      kind: "background",
      submit: "submit_gemini",
      tasks: (args) => [args],
      answer: async ([id]) => toolOk({ ...(await deps.gemini()).ended(id!) }),
    },
    handler: async (task, call) => {
      const svc = await deps.gemini();
      return toolOk({ ...(await svc.delegate(task, { signal: call.signal })) });
    },
  });
  return [
    delegate,
    ...jobTools({
      kind: "gemini",
      label: "Gemini (agy)",
      idPrefix: "gm-",
      task: geminiTaskInput,
      maxTasks: 256,
      descriptions: {
        submit: `${submitGeminiText.trim()} ${WARNING}`,
        poll: pollGeminiText.trim(),
        cancel: cancelGeminiText.trim(),
      },
      service: deps.gemini,
    }),
  ];
}
