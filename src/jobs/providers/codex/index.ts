import { providerEntry } from "../../../providers.ts";
import type { ProviderModule } from "../../provider-module.ts";
import { codexPollOutput, codexSubmitOutput, jobOutput } from "../../tool-schemas.ts";
import { CODEX_CLOUD_WARNING } from "./codex-warning.ts";
import delegateText from "./delegate-to-codex.txt" with { type: "text" };
import pollText from "./poll-codex.txt" with { type: "text" };
import type { CodexService } from "./service.ts";
import { codexSteps } from "./steps.ts";
import submitText from "./submit-codex.txt" with { type: "text" };
import { codexTaskInput } from "./task.ts";

/** Codex CLI jobs: submit/poll/cancel_codex and delegate_to_codex, on the user's ChatGPT plan. */
export const codex = {
  facts: providerEntry("codex"),
  unusable: (c, m) =>
    m.which(c.codex.bin, c.codexChildEnv.PATH ?? "")
      ? null
      : `the Codex CLI (${c.codex.bin}) is not on PATH; install @openai/codex or set DELEGATE_CODEX_BIN`,
  start: async (c, ctx) => (await import("./service.ts")).startJobs(c, ctx),
  tools: {
    task: codexTaskInput,
    maxTasks: 256,
    descriptions: {
      submit: `${submitText.trim()} ${CODEX_CLOUD_WARNING}`,
      poll: pollText.trim(),
      cancel:
        "Cancels one Codex job: drops it from the queue, or kills the Codex CLI's process group. An ended job is left as it is.",
    },
    submitOutput: codexSubmitOutput,
    pollOutput: codexPollOutput,
    delegate: {
      title: "Run a Codex CLI task and wait",
      description: `${delegateText.trim()} A cloud model: never personal or health data.`,
      input: codexTaskInput,
      output: jobOutput,
    },
  },
  status: async () => (await import("./status.ts")).status,
  // Its output is `codex exec --json`'s event stream: shown as steps, like an agent job's.
  outputSteps: codexSteps,
} satisfies ProviderModule<CodexService>;
