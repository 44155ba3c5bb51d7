import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentResultSchema } from "../../../../src/agent/result.ts";
import { parseAgentRun } from "../../../../src/jobs/providers/agent/provider.ts";
import { agentJobResult, jobAnswer, ownAnswer } from "../../../../src/jobs/providers/agent/result.ts";
import type { JobRow } from "../../../../src/store/types.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { runOutput } from "../../helpers.ts";

/** An agent job's result is its child's delegation result, or one built from its row and transcript. */
const whole = {
  success: false,
  final_response: "half done",
  agent_source: "project-agent",
  model: "local-x",
  model_used: "local-x",
  turns: 2,
  stop_reason: "error",
  hit_turn_limit: false,
  incomplete: true,
  nudges: 0,
  resumed_after_nudge: false,
  bash_calls: 1,
  bash_failures: 1,
  last_bash_exit: 3,
  usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, cache_write_tokens: 1 },
  elapsed_s: 1.5,
  error: "model call 3 failed",
  steps: 3,
  cost: { state: "unknown", usd: null },
};

function row(over: Partial<JobRow>): JobRow {
  return {
    id: "ag-0123456789",
    provider: "agent",
    status: "failed",
    model: null,
    params: JSON.stringify({ agent_name: "helper", agent_source: "project-skill" }),
    started_at: 1_000,
    ended_at: 4_500,
    final_response: null,
    failure_kind: null,
    usage: null,
    ...over,
  } as JobRow;
}

describe("an agent job's answer and its run's own final_response", () => {
  test("ownAnswer undoes jobAnswer for every shape of result", () => {
    for (const r of [
      { success: true, final_response: "ok", error: "ignored" },
      { success: false, final_response: "", error: "refused" },
      { success: false, final_response: "partial\n\nwork", error: "refused" },
      { success: false, final_response: "no error given" },
    ]) {
      expect(ownAnswer(jobAnswer(r), r)).toBe(r.final_response);
    }
  });

  test("a child that printed a whole result gives it back exactly, its log the job's", () => {
    const parsed = parseAgentRun(runOutput("/nonexistent", { exitCode: 1, stdout: `${JSON.stringify(whole)}\n` }));
    expect(parsed.finalResponse).toBe("model call 3 failed\n\nhalf done");
    const r = agentJobResult(
      row({ final_response: parsed.finalResponse, usage: JSON.stringify(parsed.usage) }),
      "/nonexistent",
    );
    expect(r).toEqual({ ...whole, agent_source: "project-agent", logs: "dl logs ag-0123456789" } as never);
    expect(agentResultSchema().safeParse(r).success).toBe(true);
  });

  test("a run that printed nothing (killed) still says what it ran and spent, from its transcript", () => {
    const dir = tempDir("agent-result");
    const transcript = join(dir, "transcript.jsonl");
    const lines = [
      { t: "turn", n: 1, model: "local-y", in: 100, cached: 40, written: 7, out: 20, stop: "tool_use", ms: 5 },
      { t: "tool", n: 1, tool: "run_bash", target: "make", exit: 2, bytes_in: 1, bytes_out: 1, ms: 1 },
      { t: "turn", n: 2, model: "local-y", in: 150, cached: 90, out: 30, stop: "tool_use", ms: 5 },
      { t: "tool", n: 2, tool: "read_file", target: "a", exit: 0, bytes_in: 1, bytes_out: 1, ms: 1 },
    ];
    writeFileSync(transcript, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const r = agentJobResult(row({ status: "timeout", final_response: "ran past its budget" }), transcript);
    expect(agentResultSchema().safeParse(r).success).toBe(true);
    expect(r).toMatchObject({
      success: false,
      agent_source: "project-skill",
      model_used: "local-y",
      turns: 2,
      stop_reason: "timeout",
      bash_calls: 1,
      bash_failures: 1,
      last_bash_exit: 2,
      usage: { input_tokens: 250, cache_read_tokens: 130, cache_write_tokens: 7, output_tokens: 50 },
      elapsed_s: 3.5,
      steps: 4,
    });
    expect(r.error).toContain("ended timeout");
    expect(r.error).toContain("ran past its budget");
  });
});
