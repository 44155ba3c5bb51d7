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
  error: z.string().optional().describe("what failed and what to do next"),
  code: z.string().optional(),
  failure_kind: z.string().nullable().optional(),
}));

export const nullableString = once(() => z.string().nullable().optional());
export const nullableNumber = once(() => z.number().nullable().optional());

/** One job as poll_* and delegate_to_codex show it (or `{id, status: "unknown", error}`). */
const jobFields = once(() => ({
  id: z.string().optional(),
  provider: z.string().optional(),
  status: z.string().optional(),
  queue_reason: nullableString(),
  workdir: z.string().optional(),
  model: nullableString(),
  effort: nullableString(),
  elapsed_s: nullableNumber(),
  queued_s: z.number().optional(),
  final_response: nullableString(),
  truncated: z.boolean().optional(),
  exit_code: nullableNumber(),
  session_id: nullableString(),
  usage: z.unknown().optional(),
  read_only: z.boolean().optional(),
  warnings: z.array(z.unknown()).optional(),
  // Rarer fields (retry_count, retry_in_s, last_activity_age_s, owner, persist_error,
  // very_short_run, empty_response, final_response_length …) come in the open object
  // without a line each here: every line is paid for in every session's tools/list.
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
    .loose(),
);

/** The Codex account (its state and the caps in force) rides along with Codex's submit and poll only. */
const codexAccount = (withAccount: boolean) => (withAccount ? { account: account().optional() } : {});

const submitOutputOf = (withAccount: boolean) =>
  z
    .object({
      jobs: z.array(jobView()).optional().describe("as queued; a completed task has them as poll_* shows them"),
      watch: z.string().optional().describe("the dl wait command to start in the background now"),
      watch_hint: z.string().optional(),
      ...codexAccount(withAccount),
      ...errorFields(),
    })
    .loose();

/** submit_gemini / submit_dsh / submit_agent; submit_codex with the account. */
export const submitOutput = once(() => submitOutputOf(false));
export const codexSubmitOutput = once(() => submitOutputOf(true));

const pollOutputOf = (withAccount: boolean) =>
  z.object({ jobs: z.array(jobView()).optional(), ...codexAccount(withAccount), ...errorFields() }).loose();

/** poll_gemini / poll_dsh / poll_agent; poll_codex with the account. */
export const pollOutput = once(() => pollOutputOf(false));
export const codexPollOutput = once(() => pollOutputOf(true));

/** cancel_codex / cancel_gemini / cancel_dsh / cancel_agent. */
export const cancelOutput = once(() =>
  z
    .object({
      id: z.string().optional(),
      status: z.string().optional(),
      changed: z.boolean().optional(),
      note: z.string().optional(),
      ...errorFields(),
    })
    .loose(),
);

/** delegate_to_<name> (Codex's): the job as poll_<name> shows it once it has ended. */
export const jobOutput = once(() => z.object({ ...jobFields(), ...errorFields() }).loose());
