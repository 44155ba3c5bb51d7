import { z } from "zod";
import { once } from "../once.ts";

/**
 * Output schemas of every provider's job tools (mcp/tools/job-tools.ts). A refusal of these tools is an
 * error result that still carries structured content ({error, code, failure_kind}) so a
 * client can branch on failure_kind, and the SDK's client checks error results against
 * the output schema too. So each schema is one object whose fields are all optional: a
 * success fills the tool's fields, an error only the three error fields. Nested objects
 * stay open (`loose`) so a new field never breaks an older client.
 */
export const errorFields = once(() => ({
  error: z.string().optional().describe("error results only: what failed and what to do next"),
  code: z.string().optional().describe("error results only: dl's error code"),
  failure_kind: z.string().nullable().optional().describe("why a job failed or a call was refused"),
}));

export const nullableString = once(() => z.string().nullable().optional());
export const nullableNumber = once(() => z.number().nullable().optional());

/** One job as poll_* and delegate_to_codex show it (or `{id, status: "unknown", error}`). */
const jobFields = once(() => ({
  id: z.string().optional(),
  provider: z.string().optional(),
  status: z.string().optional().describe("queued, running, done, failed, timeout, cancelled, lost, unknown, …"),
  queue_reason: nullableString(),
  workdir: z.string().optional(),
  model: nullableString(),
  effort: nullableString(),
  elapsed_s: nullableNumber(),
  queued_s: z.number().optional(),
  final_response: nullableString(),
  truncated: z.boolean().optional(),
  final_response_length: z.number().optional(),
  retry_count: z.number().optional(),
  retry_in_s: nullableNumber(),
  last_activity_age_s: nullableNumber(),
  exit_code: nullableNumber(),
  session_id: nullableString(),
  usage: z.unknown().optional(),
  owner: z.object({}).loose().optional(),
  read_only: z.boolean().optional(),
  warnings: z.array(z.unknown()).optional(),
  persist_error: nullableString(),
  very_short_run: z.boolean().optional(),
  empty_response: z.boolean().optional(),
}));

const jobView = once(() =>
  z.object({ ...jobFields(), failure_kind: errorFields().failure_kind, error: errorFields().error }).loose(),
);

const account = once(() =>
  z
    .object({
      state: z.string(),
      cooldown_until: z.string().nullable(),
      effective_caps: z.object({ global: z.number(), per_project: z.number() }).loose(),
    })
    .loose()
    .describe("the Codex account: ok, cooldown or auth_failed, and the caps in force"),
);

const submitted = once(() =>
  z
    .object({
      id: z.string(),
      status: z.string(),
      workdir: z.string(),
      project: z.string(),
      warnings: z.array(z.string()),
    })
    .loose(),
);

/** submit_codex / submit_gemini / submit_dsh / submit_agent. */
export const submitOutput = once(() =>
  z
    .object({
      jobs: z.array(submitted()).optional(),
      watch: z.string().optional().describe("the dl wait command to start in the background now"),
      watch_hint: z.string().optional(),
      account: account().optional(),
      ...errorFields(),
    })
    .loose(),
);

/** poll_codex / poll_gemini / poll_dsh / poll_agent. */
export const pollOutput = once(() =>
  z.object({ jobs: z.array(jobView()).optional(), account: account().optional(), ...errorFields() }).loose(),
);

/** cancel_codex / cancel_gemini / cancel_dsh / cancel_agent. */
export const cancelOutput = once(() =>
  z
    .object({
      id: z.string().optional(),
      status: z.string().optional(),
      changed: z.boolean().optional().describe("false when the job had already ended"),
      note: z.string().optional(),
      ...errorFields(),
    })
    .loose(),
);

/** delegate_to_<name> (Codex's): the job as poll_<name> shows it once it has ended. */
export const jobOutput = once(() => z.object({ ...jobFields(), ...errorFields() }).loose());
