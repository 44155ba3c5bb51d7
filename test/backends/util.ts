/** Shared helpers for backend tests: a request builder and a clock that never really sleeps. */
import type { Clock } from "../../src/backends/retry.ts";
import { endpointFor } from "../../src/backends/route.ts";
import type { Message, ModelRequest, ToolSpec } from "../../src/backends/types.ts";

export const KEY = "sk-test-SECRET-0123456789abcdef";

export const TOOLS: ToolSpec[] = [
  {
    name: "read_file",
    description: "Read a file",
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  {
    name: "run_bash",
    description: "Run a command",
    input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
];

export function request(baseUrl: string, model: string, over: Partial<ModelRequest> = {}): ModelRequest {
  const messages: Message[] = [{ role: "user", content: "do the task" }];
  return {
    endpoint: endpointFor({ baseUrl, apiKey: KEY, model }),
    model,
    system: "You are a test agent.",
    messages,
    tools: TOOLS,
    max_tokens: 1000,
    stream: true,
    resendReasoning: false,
    promptCaching: false,
    signal: new AbortController().signal,
    ...over,
  };
}

/** Time advances only when the code under test sleeps; every sleep is recorded. */
export function fakeClock(): { clock: Clock; sleeps: number[] } {
  let t = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    clock: {
      now: () => t,
      random: () => 0.5,
      sleep: async (ms, signal) => {
        if (signal.aborted) throw signal.reason;
        sleeps.push(ms);
        t += ms;
      },
    },
  };
}
