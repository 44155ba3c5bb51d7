import { describe, expect, test } from "bun:test";
import { parseAgentRun } from "../../../../src/jobs/providers/agent/provider.ts";
import { runOutput } from "../../helpers.ts";

/** Reading a child `dl run --json`: the result is the answer, and its absence says why. */
const run = (over: Parameters<typeof runOutput>[1]) => runOutput("/nonexistent", over);

const result = {
  success: true,
  final_response: "all good",
  turns: 2,
  bash_calls: 1,
  bash_failures: 1,
  last_bash_exit: 3,
  usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0 },
  model_used: "local-x",
};

describe("parseAgentRun", () => {
  test("a successful result keeps the answer and the measured fields", () => {
    const p = parseAgentRun(run({ stdout: `${JSON.stringify(result)}\n`, stderr: "dl run: turn 1/25: run_bash\n" }));
    expect(p.finalResponse).toBe("all good");
    expect(p.failure).toBeNull();
    expect(p.usage).toMatchObject({ success: true, turns: 2, last_bash_exit: 3, model_used: "local-x" });
  });

  test("a result that says it failed is a failure whose answer leads with the error", () => {
    const bad = { ...result, success: false, final_response: "", error: "backend refused: 401" };
    const p = parseAgentRun(run({ exitCode: 1, stdout: JSON.stringify(bad) }));
    expect(p.failure).toBe("other");
    expect(p.finalResponse).toBe("backend refused: 401");
  });

  test("no result at all: infra when it exited 0, and the end of stderr explains", () => {
    const p = parseAgentRun(run({ stdout: "not json", stderr: "dl: DELEGATE_X is invalid" }));
    expect(p.failure).toBe("infra");
    expect(p.finalResponse).toContain("exited 0 without a result");
    expect(p.finalResponse).toContain("DELEGATE_X is invalid");
    const killed = parseAgentRun(run({ exitCode: null, signal: "SIGKILL" }));
    expect(killed.finalResponse).toContain("was stopped (SIGKILL)");
    expect(killed.failure).toBeNull();
  });
});
