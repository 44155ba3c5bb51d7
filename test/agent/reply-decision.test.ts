import { describe, expect, test } from "bun:test";
import { NUDGE_TEXT } from "../../src/agent/history.ts";
import { decideReply, type NudgeState, type ReplyFacts, type ReplyPolicy } from "../../src/agent/reply-decision.ts";

const policy: ReplyPolicy = { maxTurns: 10, maxNudges: 2, maxTokens: 4096 };
const fresh: NudgeState = { turn: 1, nudges: 0, resumed: false, lastWasNudge: false, beforeNudge: "" };
const reply = (text: string, o: Partial<ReplyFacts> = {}): ReplyFacts => ({
  text,
  toolCalls: 0,
  stopReason: "end_turn",
  ...o,
});
const ANNOUNCING = "I read the file. Now I'll fix the test:";

describe("decideReply", () => {
  test("tool calls run, except on the last turn where the run stops at max_turns", () => {
    expect(decideReply(reply("", { toolCalls: 2 }), { ...fresh, turn: 9 }, policy)).toEqual({ kind: "run_tools" });
    const last = decideReply(reply("working", { toolCalls: 1 }), { ...fresh, turn: 10 }, policy);
    expect(last.kind).toBe("stop");
    if (last.kind !== "stop") return;
    expect(last.end).toMatchObject({ final: "working", stop: "max_turns", hitLimit: true, incomplete: true });
    expect(last.end.error).toContain("all 10 turns");
  });

  test("a reply cut at max_tokens stops incomplete and names the limit, even when it announces work", () => {
    const d = decideReply(reply(ANNOUNCING, { stopReason: "max_tokens" }), fresh, policy);
    expect(d.kind).toBe("stop");
    if (d.kind !== "stop") return;
    expect(d.end).toMatchObject({ stop: "max_tokens", incomplete: true, final: ANNOUNCING });
    expect(d.end.error).toContain("max_tokens=4096");
  });

  test("announced work without a tool call draws a nudge while nudges and turns remain", () => {
    expect(decideReply(reply(ANNOUNCING), fresh, policy)).toEqual({ kind: "nudge", message: NUDGE_TEXT });
    // Three turns left after this one: the countdown rides on the nudge.
    const late = decideReply(reply(ANNOUNCING), { ...fresh, turn: 7 }, policy);
    expect(late.kind).toBe("nudge");
    expect(late.kind === "nudge" && late.message.startsWith(NUDGE_TEXT)).toBe(true);
    expect(late.kind === "nudge" && late.message).toContain("3 turns left");
    expect(decideReply(reply(ANNOUNCING), { ...fresh, nudges: 2 }, policy).kind).toBe("stop");
    expect(decideReply(reply(ANNOUNCING), { ...fresh, turn: 10 }, policy).kind).toBe("stop");
  });

  test("a plain answer ends the run successfully with the model's stop reason", () => {
    expect(decideReply(reply("All done: tests pass."), { ...fresh, turn: 4 }, policy)).toEqual({
      kind: "stop",
      end: { final: "All done: tests pass.", stop: "end_turn", hitLimit: false, incomplete: false },
    });
    const noReason = decideReply(reply("done", { stopReason: undefined }), fresh, policy);
    expect(noReason.kind === "stop" && noReason.end.stop).toBe("end_turn");
  });

  test("an empty reply ends the run incomplete with an error", () => {
    const d = decideReply(reply(""), fresh, policy);
    expect(d.kind === "stop" && d.end).toMatchObject({ incomplete: true, final: "" });
    expect(d.kind === "stop" && d.end.error).toContain("empty reply");
  });

  test("still announcing after the nudges ran out is incomplete, unless the agent resumed working", () => {
    const stuck = decideReply(reply(ANNOUNCING), { ...fresh, turn: 3, nudges: 2 }, policy);
    expect(stuck.kind === "stop" && stuck.end).toMatchObject({ incomplete: true });
    expect(stuck.kind === "stop" && stuck.end.error).toContain("after 2 nudge(s)");
    const resumed = decideReply(reply(ANNOUNCING), { ...fresh, turn: 3, nudges: 2, resumed: true }, policy);
    expect(resumed.kind === "stop" && resumed.end).toMatchObject({ incomplete: false });
    expect(resumed.kind === "stop" && resumed.end.error).toBeUndefined();
  });

  test("answering on the last turn after working up to it reports the hit limit; after a nudge it does not", () => {
    const worked = decideReply(reply("report"), { ...fresh, turn: 10 }, policy);
    expect(worked.kind === "stop" && worked.end.hitLimit).toBe(true);
    const nudged = decideReply(reply("report"), { ...fresh, turn: 10, nudges: 1, lastWasNudge: true }, policy);
    expect(nudged.kind === "stop" && nudged.end.hitLimit).toBe(false);
    const single = decideReply(reply("report"), fresh, { ...policy, maxTurns: 1 });
    expect(single.kind === "stop" && single.end.hitLimit).toBe(false);
  });

  test("a report interrupted by a nudge is kept when the agent then only confirms it is done", () => {
    const state = {
      ...fresh,
      turn: 3,
      nudges: 1,
      lastWasNudge: true,
      beforeNudge: "Fixed the bug. I'll leave docs to you.",
    };
    const d = decideReply(reply("Done."), state, policy);
    expect(d.kind === "stop" && d.end.final).toBe("Fixed the bug. I'll leave docs to you.\n\nDone.");
    // Nudges used up, and the reply already repeats the report: it is not doubled.
    const repeated = decideReply(reply(`${state.beforeNudge} Done.`), { ...state, nudges: 2 }, policy);
    expect(repeated.kind === "stop" && repeated.end.final).toBe(`${state.beforeNudge} Done.`);
  });
});
