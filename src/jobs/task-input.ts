import { z } from "zod";
import { DlError } from "../errors.ts";

/**
 * The pieces every job provider's task schema shares (the task text, the timeout) and the
 * one way a task that fails its schema is explained. Each provider's *-task.ts keeps
 * only what is its own.
 */

/** The task text for `who` ("Codex", "the dsh run"): non-empty, at most maxBytes of UTF-8. */
export function taskText(who: string, maxBytes: number, description: string) {
  return z
    .string({ error: `task must be a string: the instructions for ${who}` })
    .refine((s) => s.trim() !== "", `task must be a non-empty string: the instructions for ${who}`)
    .refine(
      (s) => Buffer.byteLength(s) <= maxBytes,
      `task is over ${maxBytes} bytes; put the details in a file inside the workdir and point the task at it`,
    )
    .describe(description);
}

/**
 * timeout_s in whole seconds (the row stores an integer and a fraction would only look
 * precise), 1 to max; `killed` says what the watchdog stops when it runs out.
 */
export function timeoutSeconds(max: number, defaultS: number, killed: string) {
  const rule = `timeout_s must be a whole number of seconds from 1 to ${max}`;
  return z
    .number({ error: rule })
    .int(rule)
    .min(1, rule)
    .max(max, rule)
    .optional()
    .describe(`wall-clock limit from start; ${killed} after it (default ${defaultS})`);
}

/** The first problem zod found in a task, said the way a caller can fix it. */
function describeTaskIssue(issue: z.core.$ZodIssue, allowed: string): string {
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 32)));
    return `unknown task field(s) ${keys.join(", ")}; allowed: ${allowed}`;
  }
  if (issue.path.length === 0) return `each task must be an object {${allowed}}`;
  return issue.message;
}

/** Parses one task with its provider's strict schema. Throws DlError bad_input naming the first problem. */
export function parseTask<S extends z.ZodObject>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new DlError("bad_input", describeTaskIssue(parsed.error.issues[0]!, Object.keys(schema.shape).join(", ")));
}
