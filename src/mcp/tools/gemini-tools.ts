import { geminiTaskInput } from "../../jobs/providers/gemini/task.ts";
import type { ServerDeps } from "../../services.ts";
import { toolOk } from "../tool-result.ts";
import { defineTool, type ToolDef } from "../tool-table.ts";
import cancelGeminiText from "./cancel-gemini.txt" with { type: "text" };
import delegateToGeminiText from "./delegate-to-gemini.txt" with { type: "text" };
import warningText from "./gemini-warning.txt" with { type: "text" };
import { geminiJobOutput } from "./job-schemas.ts";
import { jobTools } from "./job-tools.ts";
import pollGeminiText from "./poll-gemini.txt" with { type: "text" };
import submitGeminiText from "./submit-gemini.txt" with { type: "text" };

const WARNING = warningText.trim();

/**
 * The four Gemini tools, on one GeminiService per server (started on first use). Each one
 * refuses, saying why, unless DELEGATE_GEMINI_ALLOW_DANGER=1: deps.gemini() is the gate.
 */
export function geminiTools(deps: ServerDeps): ToolDef[] {
  const delegate = defineTool({
    name: "delegate_to_gemini",
    title: "Run a Gemini (agy) task and wait",
    description: `${delegateToGeminiText.trim()} ${WARNING}`,
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
        poll: `${pollGeminiText.trim()} Refused unless DELEGATE_GEMINI_ALLOW_DANGER=1.`,
        cancel: `${cancelGeminiText.trim()} Refused unless DELEGATE_GEMINI_ALLOW_DANGER=1.`,
      },
      service: deps.gemini,
    }),
  ];
}
