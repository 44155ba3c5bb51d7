import { describe, expect, test } from "bun:test";
import { chooseOutcome, outcomePatch, type RunFacts, stoppedPatch } from "../../../src/jobs/engine/job-outcome.ts";

const facts = (over: Partial<RunFacts> = {}): RunFacts => ({
  timedOut: false,
  exitCode: 1,
  classify: () => "other",
  retryCount: 0,
  maxRetries: 2,
  ...over,
});

describe("the final status of a run nobody stopped", () => {
  test("a timeout wins over the exit code, and the provider is not asked", () => {
    const classify = () => {
      throw new Error("must not be called");
    };
    expect(chooseOutcome(facts({ timedOut: true, exitCode: 0, classify }))).toEqual({
      status: "timeout",
      failureKind: "timeout",
    });
    expect(chooseOutcome(facts({ exitCode: 0, classify }))).toEqual({ status: "done", failureKind: null });
  });

  test("a refused result file fails the run whatever its exit code, and a throttle is not replayed", () => {
    const classify = () => "throttle" as const;
    for (const exitCode of [0, 1, null]) {
      expect(chooseOutcome(facts({ exitCode, outputFailure: "result_file_refused", classify }))).toEqual({
        status: "failed",
        failureKind: "result_file_refused",
      });
    }
  });

  test("a throttle is retried while the budget lasts, then fails as throttle", () => {
    const throttle = facts({ classify: () => "throttle" });
    expect(chooseOutcome(throttle)).toEqual({ status: "queued", retry: 1 });
    expect(chooseOutcome({ ...throttle, retryCount: 1 })).toEqual({ status: "queued", retry: 2 });
    expect(chooseOutcome({ ...throttle, retryCount: 2 })).toEqual({ status: "failed", failureKind: "throttle" });
  });

  test("auth ends auth_failed; other classes and a killed child (null exit) fail with their class", () => {
    expect(chooseOutcome(facts({ classify: () => "auth" }))).toEqual({ status: "auth_failed", failureKind: "auth" });
    expect(chooseOutcome(facts({ classify: () => "quota" }))).toEqual({ status: "failed", failureKind: "quota" });
    expect(chooseOutcome(facts({ exitCode: null, classify: () => "infra" }))).toEqual({
      status: "failed",
      failureKind: "infra",
    });
  });

  test("a provider whose classify throws counts as other", () => {
    const classify = () => {
      throw new Error("boom");
    };
    expect(chooseOutcome(facts({ classify }))).toEqual({ status: "failed", failureKind: "other" });
  });

  test("patches: an end carries ended_at; a retry forgets the child and is due after its backoff", () => {
    expect(outcomePatch({ status: "done", failureKind: null }, 5000, () => 0)).toEqual({
      status: "done",
      failure_kind: null,
      ended_at: 5000,
    });
    const retry = outcomePatch({ status: "queued", retry: 2 }, 5000, (n) => n * 1000);
    expect(retry).toMatchObject({
      status: "queued",
      queue_reason: "throttle_cooldown",
      retry_count: 2,
      retry_at: 7000,
    });
    expect(retry).toMatchObject({ started_at: null, child_pid: null, child_pgid: null, child_start: null });
    expect(retry.ended_at).toBeUndefined();
    expect(stoppedPatch("shutdown", 9, 143)).toEqual({
      status: "cancelled",
      failure_kind: "server_stopped",
      exit_code: 143,
      ended_at: 9,
    });
    expect(stoppedPatch("cancel", 9).failure_kind).toBeNull();
  });
});
