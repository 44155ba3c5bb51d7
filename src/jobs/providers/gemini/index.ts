import { providerEntry } from "../../../providers.ts";
import type { ProviderModule } from "../../provider-module.ts";
import cancelText from "./cancel-gemini.txt" with { type: "text" };
import delegateText from "./delegate-to-gemini.txt" with { type: "text" };
import { geminiRefusal } from "./gate.ts";
import warningText from "./gemini-warning.txt" with { type: "text" };
import { geminiJobOutput } from "./output-schema.ts";
import pollText from "./poll-gemini.txt" with { type: "text" };
import type { GeminiService } from "./service.ts";
import submitText from "./submit-gemini.txt" with { type: "text" };
import { geminiTaskInput } from "./task.ts";

const WARNING = warningText.trim();

/**
 * Gemini through the Antigravity CLI (agy), always jailed. Every entry point refuses,
 * saying why, unless DELEGATE_GEMINI_ALLOW_DANGER=1 (gate.ts): the service is never
 * started without it, and its tools are not listed.
 */
export const gemini = {
  facts: providerEntry("gemini"),
  refusal: geminiRefusal,
  unusable: (c) => (geminiRefusal(c) ? "DELEGATE_GEMINI_ALLOW_DANGER is not 1 (Gemini runs only when allowed)" : null),
  start: async (c, ctx) => (await import("./service.ts")).startJobs(c, ctx),
  tools: {
    task: geminiTaskInput,
    maxTasks: 256,
    descriptions: {
      submit: `${submitText.trim()} ${WARNING}`,
      poll: pollText.trim(),
      cancel: cancelText.trim(),
    },
    delegate: {
      title: "Run a Gemini (agy) task and wait",
      // The privacy warning is said once, on submit_gemini; delegate_to_gemini points to its rules.
      description: delegateText.trim(),
      input: geminiTaskInput,
      output: geminiJobOutput,
    },
  },
  status: async () => (await import("./status.ts")).status,
} satisfies ProviderModule<GeminiService>;
