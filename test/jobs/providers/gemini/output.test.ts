import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { type AgyRun, parseAgyOutput, tokenCount } from "../../../../src/jobs/providers/gemini/output.ts";

const fixture = (name: string) => readFileSync(new URL(`../../../fixture/agy/${name}`, import.meta.url), "utf8");
const run = (stdout: string, over: Partial<AgyRun> = {}): AgyRun => ({ stdout, stderr: "", exitCode: 0, ...over });

describe("parseAgyOutput: fixtures of agy's --output-format json", () => {
  test("Gemini CLI shape: response, session_id, stats summed over every model", () => {
    expect(parseAgyOutput(run(fixture("stats.json")))).toEqual({
      status: "done",
      response: "Added the missing null check in src/parse.ts and a test for it.\n\nAll 12 tests pass.",
      conversation_id: "2f6c1a4e-8d0b-4c55-9a3e-1b7f0d2c9e61",
      usage: {
        input_tokens: 10540,
        output_tokens: 532,
        total_tokens: 11320,
        cached_tokens: 2048,
        thoughts_tokens: 248,
      },
      exit_code: 0,
    });
  });

  test("conversation_id and a flat usage object; counts coerced to safe non-negative integers", () => {
    const r = parseAgyOutput(run(fixture("conversation-usage.json")));
    expect(r).toEqual({
      status: "done",
      response: "Done.",
      conversation_id: "conv-77",
      usage: { input_tokens: 1200, output_tokens: 34, total_tokens: 0, cached_tokens: Number.MAX_SAFE_INTEGER },
      exit_code: 0,
    });
  });

  test("a notice line before the JSON object is skipped", () => {
    const r = parseAgyOutput(run(fixture("notice-before-json.json")));
    expect(r).toMatchObject({ status: "done", response: "ok", conversation_id: "s-1", usage: null });
  });

  test("hostile text: escapes and bidi overrides removed, unusable counts dropped", () => {
    const r = parseAgyOutput(run(fixture("hostile.json")));
    if (r.status !== "done") throw new Error("expected done");
    expect(r.response).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(r.response).toContain("fine");
    expect(r.response).toContain("evil");
    expect(r.conversation_id).toBe("id -9");
    expect(r.usage).toEqual({ input_tokens: 7, output_tokens: 0, total_tokens: Number.MAX_SAFE_INTEGER });
  });

  test("an error object is a failed job; an auth error names the jail's session problem", () => {
    const r = parseAgyOutput(run(fixture("error-auth.json")));
    expect(r).toMatchObject({ status: "failed", failure_kind: "auth", exit_code: 0, response: null });
    if (r.status === "failed") expect(r.error).toStartWith("agy session not readable in the jail");
  });

  test("JSON without a response is bad output, keeping the conversation id", () => {
    const r = parseAgyOutput(run(fixture("no-response.json")));
    expect(r).toMatchObject({ status: "failed", failure_kind: "bad_output", conversation_id: "s-2", usage: null });
  });

  test("plain text on stdout (no --output-format json) fails with an excerpt of it", () => {
    const r = parseAgyOutput(run(fixture("not-json.txt")));
    expect(r).toMatchObject({ status: "failed", failure_kind: "bad_output", exit_code: 0 });
    if (r.status === "failed") expect(r.excerpt).toBe("I would be happy to help! Here is the plan: 1. read files");
  });
});

describe("parseAgyOutput: exits", () => {
  test("non-zero exit fails even with a response, stderr excerpt sanitized", () => {
    const r = parseAgyOutput(
      run(fixture("stats.json"), { exitCode: 2, stderr: "\u001b[31merror: unknown option '--bogus'\u001b[0m\n" }),
    );
    expect(r).toMatchObject({ status: "failed", failure_kind: "cli_error", exit_code: 2, error: "agy exited 2" });
    if (r.status !== "failed") throw new Error("expected failed");
    expect(r.excerpt).toBe("error: unknown option '--bogus'");
    expect(r.response).toStartWith("Added the missing null check");
    expect(r.usage?.total_tokens).toBe(11320);
  });

  test("a sign-in message on stderr is an auth failure", () => {
    const r = parseAgyOutput(run("", { exitCode: 1, stderr: "Error: not signed in. Run 'agy' once to sign in.\n" }));
    expect(r).toMatchObject({ status: "failed", failure_kind: "auth", exit_code: 1 });
  });

  test("killed by a signal", () => {
    const r = parseAgyOutput(run("", { exitCode: null, signal: "SIGKILL" }));
    expect(r).toMatchObject({ status: "failed", failure_kind: "cli_error", exit_code: null });
    if (r.status === "failed") expect(r.error).toBe("agy was killed by SIGKILL");
  });

  test("empty stdout with exit 0 is bad output", () => {
    expect(parseAgyOutput(run(""))).toMatchObject({ status: "failed", failure_kind: "bad_output", excerpt: "" });
  });
});

test("tokenCount", () => {
  expect(tokenCount(5)).toBe(5);
  expect(tokenCount("12")).toBe(12);
  expect(tokenCount(-1)).toBe(0);
  expect(tokenCount(2.9)).toBe(2);
  expect(tokenCount(Number.POSITIVE_INFINITY)).toBeUndefined();
  expect(tokenCount("12abc")).toBeUndefined();
  expect(tokenCount(null)).toBeUndefined();
  expect(tokenCount(1e300)).toBe(Number.MAX_SAFE_INTEGER);
});
