import { readTranscript, type TranscriptTotals, transcriptTotals } from "../../../agent/transcript.ts";
import { delegationOutcomeSchema } from "../../../dispatch/delegation-result.ts";
import type { DelegationResult } from "../../../dispatch/run-delegation.ts";
import { once } from "../../../once.ts";
import type { JobRow } from "../../../store/types.ts";
import { jsonColumn } from "../../engine/poll.ts";

/**
 * An agent job's result as delegate_to_local_agent would have returned it: what its
 * child `dl run --json` printed (kept in the row by provider.ts), or, for a run that
 * printed none (cancelled, timed out, its supervisor or server gone), a failed result
 * built from the row and the run's transcript, so it still says what ran and spent.
 */

type Answered = { success: boolean; final_response: string; error?: string | undefined };

/** The answer a job shows (poll_agent, dl wait, dl show): a failed run's error leads. */
export function jobAnswer(r: Answered): string {
  return r.success || !r.error ? r.final_response : [r.error, r.final_response].filter(Boolean).join("\n\n");
}

/** The run's own final_response out of the job's answer: jobAnswer's inverse. */
export function ownAnswer(answer: string, r: Omit<Answered, "final_response">): string {
  if (r.success || !r.error) return answer;
  if (answer === r.error) return "";
  const lead = `${r.error}\n\n`;
  return answer.startsWith(lead) ? answer.slice(lead.length) : answer;
}

/** A whole delegation result but its answer: what the usage column of a job whose child printed one holds. */
const storedResult = once(() => delegationOutcomeSchema().omit({ final_response: true }));

const AGENT_SOURCES = ["project-agent", "project-skill", "global"] as const;

/** The job's result: its child's, else one that says why there is none. `transcript`: the job's transcript file. */
export function agentJobResult(row: JobRow, transcript: string): DelegationResult {
  const logs = `dl logs ${row.id}`;
  const stored = storedResult().safeParse(jsonColumn(row.usage));
  if (stored.success) return { ...stored.data, final_response: ownAnswer(row.final_response ?? "", stored.data), logs };
  return endedWithoutResult(row, transcriptTotals(readTranscript(transcript)?.lines ?? []), logs);
}

const PROVIDER_KEY_LOST =
  "this delegate_to_provider job's server stopped before the job ended; the provider key lived only in that server's memory, so the job cannot be resumed. Call delegate_to_provider again";

/**
 * A lost delegate_to_provider job: its server died holding the provider key in memory,
 * so no server can ever run it. poll_agent and the job's task say so in the same words.
 */
export function providerKeyLost(row: Pick<JobRow, "status" | "params" | "failure_kind">): string | null {
  if (row.status !== "lost" || row.failure_kind) return null;
  return typeof jsonColumn(row.params).provider_ref === "string" ? PROVIDER_KEY_LOST : null;
}

/** Why a job has no result of its own, in the words of its row. */
function whyNoResult(row: JobRow): string {
  const lostKey = providerKeyLost(row);
  if (lostKey) return lostKey;
  const kind = row.failure_kind ? ` (${row.failure_kind})` : "";
  const said = row.final_response?.trim();
  return `the agent job ended ${row.status}${kind} before its run printed a result${said ? `: ${said}` : ""}`;
}

function stopReason(row: JobRow): string {
  if (providerKeyLost(row)) return "provider_key_lost";
  return row.status === "failed" ? (row.failure_kind ?? "error") : row.status;
}

function endedWithoutResult(row: JobRow, ran: TranscriptTotals, logs: string): DelegationResult {
  const source = jsonColumn(row.params).agent_source;
  const model = row.model ?? ran.model ?? "";
  const elapsedMs = row.started_at !== null && row.ended_at !== null ? row.ended_at - row.started_at : 0;
  return {
    success: false,
    final_response: "",
    agent_source: AGENT_SOURCES.find((s) => s === source) ?? "global",
    model,
    model_used: ran.model ?? model,
    turns: ran.turns,
    stop_reason: stopReason(row),
    hit_turn_limit: false,
    incomplete: true,
    nudges: 0,
    resumed_after_nudge: false,
    bash_calls: ran.bash_calls,
    bash_failures: ran.bash_failures,
    last_bash_exit: ran.last_bash_exit,
    usage: ran.usage,
    elapsed_s: Math.round(elapsedMs / 100) / 10,
    error: whyNoResult(row),
    steps: ran.steps,
    logs,
  };
}
