import type { StopReason } from "../backends/types.ts";
import { type Surface, wordsFor } from "../surface.ts";
import type { DelegationFailure } from "./failure-kind.ts";
import { countdownNote, NUDGE_TEXT } from "./history.ts";
import { announcesWork } from "./policy.ts";

/** How a run ended, before the loop adds its counters to make the AgentResult. */
export type AgentEnd = {
  final: string;
  /** The AgentResult's stop_reason: the model's own, or one dl chose (max_turns, timeout…). */
  stop: string;
  hitLimit?: boolean;
  incomplete?: boolean;
  error?: string;
  /** Why it failed, when the stop reason alone does not say (a model call's HTTP answer): agent/failure-kind.ts. */
  failure?: DelegationFailure;
};

/** What the model answered this turn, reduced to what the decision needs. */
export type ReplyFacts = {
  /** The reply's text blocks joined and trimmed ("" when there are none). */
  text: string;
  toolCalls: number;
  stopReason: StopReason | undefined;
};

/** The run so far, as counted before this reply. */
export type NudgeState = {
  turn: number;
  nudges: number;
  /** The agent called tools again after a nudge. */
  resumed: boolean;
  /** The previous turn was answered with a nudge. */
  lastWasNudge: boolean;
  /** Text of the turn the last nudge interrupted. */
  beforeNudge: string;
};

export type ReplyPolicy = {
  maxTurns: number;
  maxNudges: number;
  maxTokens: number;
  /** Who reads the error: names the knobs as a tool parameter or as a flag. */
  surface?: Surface;
};

export type ReplyDecision =
  | { kind: "run_tools" }
  /** Answer with `message` (a user turn) instead of ending: the agent said it would act but did not. */
  | { kind: "nudge"; message: string }
  | { kind: "stop"; end: AgentEnd };

/**
 * What the loop does with a reply: run its tool calls, nudge the agent to act on what it
 * announced, or stop. Pure, so every branch can be tested without a model or a workdir.
 */
export function decideReply(reply: ReplyFacts, state: NudgeState, policy: ReplyPolicy): ReplyDecision {
  if (reply.toolCalls > 0) {
    if (state.turn < policy.maxTurns) return { kind: "run_tools" };
    return {
      kind: "stop",
      end: {
        final: reply.text,
        stop: "max_turns",
        hitLimit: true,
        incomplete: true,
        error: `the agent used all ${policy.maxTurns} turns and still wanted to call tools; check what it changed, then re-run the rest as a new task or raise ${wordsFor(policy.surface).maxTurns} (hard cap 40)`,
      },
    };
  }
  if (reply.stopReason === "max_tokens") {
    return {
      kind: "stop",
      end: {
        final: reply.text,
        stop: "max_tokens",
        incomplete: true,
        error: `the reply was cut at max_tokens=${policy.maxTokens}; pass a larger ${wordsFor(policy.surface).maxTokens} or ask for smaller steps`,
      },
    };
  }
  if (state.turn < policy.maxTurns && state.nudges < policy.maxNudges && announcesWork(reply.text)) {
    // The countdown rides on whatever message comes next, so a nudge cannot hide it.
    const note = countdownNote(policy.maxTurns - state.turn);
    return { kind: "nudge", message: note ? NUDGE_TEXT + note : NUDGE_TEXT };
  }
  return { kind: "stop", end: finalReply(reply, state, policy) };
}

/** The end of a run whose last reply called no tools and drew no nudge. */
function finalReply(reply: ReplyFacts, state: NudgeState, policy: ReplyPolicy): AgentEnd {
  const { text } = reply;
  // Replying on the last turn after working up to it means the budget ran out (the
  // countdown told it to stop); the report is usable, but the caller should know.
  const hitLimit = state.turn === policy.maxTurns && policy.maxTurns > 1 && !state.lastWasNudge;
  const stillAnnouncing = state.nudges > 0 && !state.resumed && announcesWork(text);
  let error: string | undefined;
  if (!text) error = "the agent ended with an empty reply; re-run it, or try another model";
  else if (stillAnnouncing) {
    error = `the agent kept announcing work without calling tools after ${state.nudges} nudge(s); re-run with a more specific task or another model`;
  }
  // A sign-off like "I'll leave the docs to you" can draw a nudge; if the agent then
  // only confirms it is done, the report it had already written must not be lost.
  const { beforeNudge } = state;
  const final =
    state.lastWasNudge && beforeNudge && !text.includes(beforeNudge) ? `${beforeNudge}\n\n${text}`.trim() : text;
  return {
    final,
    stop: reply.stopReason || "end_turn",
    hitLimit,
    incomplete: !text || stillAnnouncing,
    ...(error ? { error } : {}),
  };
}
