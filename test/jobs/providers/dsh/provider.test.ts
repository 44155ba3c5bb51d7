import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../../../../src/config.ts";
import { chooseOutcome } from "../../../../src/jobs/engine/job-outcome.ts";
import { findDshLauncher } from "../../../../src/jobs/providers/dsh/launcher.ts";
import { dshProvider, parseDshRun } from "../../../../src/jobs/providers/dsh/provider.ts";
import { dshStatus } from "../../../../src/jobs/providers/dsh/status.ts";
import {
  buildDshLaunch,
  DSH_DEFAULT_TIMEOUT_S,
  dshTaskFile,
  validateDshTask,
} from "../../../../src/jobs/providers/dsh/task.ts";
import type { JobRow } from "../../../../src/store/types.ts";
import { outputExcerpt } from "../../../../src/sys/sanitize.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { refusal } from "../../../helpers/refusal.ts";
import { runOutput } from "../../helpers.ts";

const EXAMPLE = join(import.meta.dir, "..", "..", "..", "..", "examples", "dsh-models.json");
const FAKE = join(import.meta.dir, "..", "..", "..", "fixture", "fake-dsh.sh");
const rules = { modelsFile: EXAMPLE, baseDir: "/srv/project" };

describe("validateDshTask", () => {
  test("defaults: workdir '.' is the server's directory, timeout 2400 s; an alias is resolved and noted", async () => {
    const t = validateDshTask({ task: "fix it", model: "ds-v4-flash" }, rules);
    expect(t).toMatchObject({ workdir: "/srv/project", model: "deepseek-v4-flash", timeoutS: DSH_DEFAULT_TIMEOUT_S });
    expect(t.warnings).toEqual(["model alias ds-v4-flash → deepseek-v4-flash"]);
    expect(t.params).toEqual({ alias: "ds-v4-flash" });
    const byName = validateDshTask({ task: "x", model: "deepseek-v4-flash-max", workdir: "sub", timeout_s: 60 }, rules);
    expect(byName).toMatchObject({ workdir: "/srv/project/sub", timeoutS: 60, warnings: [] });
  });

  test("shape errors name the field: model required, unknown fields, fractional timeout", async () => {
    expect(refusal(() => validateDshTask({ task: "x" }, rules))).toContain("model is required");
    expect(refusal(() => validateDshTask({ task: "x", model: "ds-v4-flash", effort: "high" }, rules))).toContain(
      'unknown task field(s) "effort"; allowed: task, model, workdir, timeout_s',
    );
    expect(refusal(() => validateDshTask({ task: "x", model: "ds-v4-flash", timeout_s: 1.5 }, rules))).toContain(
      "whole number of seconds",
    );
    expect(refusal(() => validateDshTask({ task: "  ", model: "ds-v4-flash" }, rules))).toContain("non-empty");
  });

  test("the example's disabled MiMo entry is refused for its terms, not as disabled", async () => {
    expect(refusal(() => validateDshTask({ task: "x", model: "mimo-v2" }, rules))).toContain("terms forbid automation");
  });
});

describe("buildDshLaunch", () => {
  test("--model is the entry's alias, which the launcher resolves in its own models.json", () => {
    const t = validateDshTask({ task: "x", model: "deepseek-v4-flash" }, rules);
    const job = { id: "dsh-2", task: "x", workdir: "/w", model: t.model, params: JSON.stringify(t.params) } as JobRow;
    const spec = buildDshLaunch(job, tempDir("dsh-alias"), { launcher: "/bin/dsh", childEnv: {} });
    expect(t.model).toBe("deepseek-v4-flash");
    expect(spec.argv[spec.argv.indexOf("--model") + 1]).toBe("ds-v4-flash");
  });

  test("the launcher's flags; the task only in a 0600 file in the job dir; env is the allowlist", () => {
    const jobDir = tempDir("dsh-launch");
    const job = { id: "dsh-1", task: "secret plan", workdir: "/w", model: "deepseek-v4-flash" } as JobRow;
    const spec = buildDshLaunch(job, jobDir, { launcher: "/bin/dsh", childEnv: { PATH: "/usr/bin" } });
    expect(spec.argv).toEqual([
      "/bin/dsh",
      "--cwd",
      "/w",
      "--model",
      "deepseek-v4-flash",
      "--task-file",
      dshTaskFile(jobDir),
      "--out-dir",
      join(jobDir, "out"),
    ]);
    expect(spec.argv.join(" ")).not.toContain("secret plan");
    expect(readFileSync(dshTaskFile(jobDir), "utf8")).toBe("secret plan");
    expect(statSync(dshTaskFile(jobDir)).mode & 0o777).toBe(0o600);
    expect(spec).toMatchObject({ env: { PATH: "/usr/bin" }, cwd: "/w" });
  });

  test("a launcher that disappeared after submit fails the launch", async () => {
    const p = dshProvider({ ...rules, launcher: "no-such-dsh", childEnv: { PATH: "/nonexistent" } });
    expect(() => p.launch({ model: "m" } as JobRow, { jobDir: tempDir("dsh-gone") })).toThrow(/not found on PATH/);
  });
});

const run = runOutput;

function withResult(result: object | string | null): string {
  const jobDir = tempDir("dsh-parse");
  mkdirSync(join(jobDir, "out"));
  if (result !== null)
    writeFileSync(join(jobDir, "out", "result.json"), typeof result === "string" ? result : JSON.stringify(result));
  return jobDir;
}

describe("parseDshRun", () => {
  const good = { status: "done", rc: 0, diff_stat: " a | 1 +", summary: "Fixed.", tokens: 5, wall_s: 3 };

  test("exit 0 with a good result: the summary and the result fields", async () => {
    expect(await parseDshRun(run(withResult(good)))).toEqual({
      finalResponse: "Fixed.",
      usage: { diff_stat: " a | 1 +", tokens: 5, wall_s: 3 },
    });
  });

  test("exit 0 without a readable result is an infra failure with the launcher's output", async () => {
    const p = await parseDshRun(run(withResult(null), { stdout: "working\n", stderr: "\x1b[31mboom\x1b[0m" }));
    expect(p.failure).toBe("infra");
    expect(p.finalResponse).toContain("dsh run failed: the launcher wrote no result.json");
    expect(p.finalResponse).toContain("launcher output (end):\nboom\nworking");
    expect(p.finalResponse).not.toContain("\x1b");
    expect((await parseDshRun(run(withResult("{oops")))).failure).toBe("infra");
  });

  test("exit 0 with a result that says failed: failed (other), its summary kept", async () => {
    const p = await parseDshRun(run(withResult({ ...good, status: "failed", rc: 1, summary: "red tests" })));
    expect(p.failure).toBe("other");
    expect(p.finalResponse).toContain("the dsh run ended failed (rc 1)");
    expect(p.finalResponse).toContain("summary: red tests");
    expect(p.usage).toMatchObject({ diff_stat: " a | 1 +" });
  });

  test("a non-zero exit is left to classify: the reason and output, no failure field", async () => {
    const p = await parseDshRun(run(withResult(null), { exitCode: 3, stderr: "oom" }));
    expect(p.failure).toBeNull();
    expect(p.finalResponse).toContain("the dsh launcher exited 3; the launcher wrote no result.json");
    const killed = await parseDshRun(run(withResult(good), { exitCode: null, signal: "SIGKILL" }));
    expect(killed.finalResponse).toContain("was stopped (SIGKILL)");
    expect(killed.finalResponse).toContain("summary: Fixed.");
  });

  test("the excerpt keeps the end of a long output", async () => {
    const e = outputExcerpt({ stdout: `${"x".repeat(5000)}THE END`, stderr: "" });
    expect(e.length).toBeLessThan(1300);
    expect(e.endsWith("THE END")).toBe(true);
    expect(outputExcerpt({ stdout: "", stderr: "" })).toBe("(no output)");
  });
});

test("classify: cannot run or refused arguments is infra, the rest is the run's", async () => {
  const p = dshProvider({ ...rules, launcher: FAKE, childEnv: {} });
  const job = {} as JobRow;
  expect(p.classify(run("/x", { exitCode: 127 }), job)).toBe("infra");
  expect(p.classify(run("/x", { exitCode: 2, stderr: "usage: dsh-herdr.sh --cwd" }), job)).toBe("infra");
  expect(p.classify(run("/x", { exitCode: 3, stderr: "crash" }), job)).toBe("other");
});

test("the engine ends a run that exited 0 but whose result failed as failed", async () => {
  const base = { timedOut: false, classify: () => "other" as const, retryCount: 0, maxRetries: 0 };
  expect(chooseOutcome({ ...base, exitCode: 0, outputFailure: "infra" })).toEqual({
    status: "failed",
    failureKind: "infra",
  });
  expect(chooseOutcome({ ...base, exitCode: 0, outputFailure: null })).toEqual({ status: "done", failureKind: null });
});

describe("dsh status", () => {
  // The Config `dl status` reads: the launcher and models file as a user sets them, the default caps.
  const opts = (modelsFile: string, launcher = FAKE) =>
    parseConfig(
      {
        HOME: "/nonexistent",
        PATH: "/usr/bin:/bin",
        DELEGATE_DSH_LAUNCHER: launcher,
        DELEGATE_DSH_MODELS_FILE: modelsFile,
      },
      { home: "/nonexistent", cwd: "/" },
    );

  test("launcher found or not; models file enabled list and problems", async () => {
    const dir = tempDir("dsh-status");
    const s = dshStatus(opts(EXAMPLE));
    expect(s.launcher).toEqual({ ok: true, path: FAKE });
    expect(s.models_file).toEqual({
      path: EXAMPLE,
      exists: true,
      enabled: ["ds-v4-flash", "ds-v4-flash-max"],
      problems: [],
    });
    expect(s.caps).toEqual({ max_concurrent: 2, max_per_project: 2, max_queue: 16, stagger_s: 5 });

    const missing = dshStatus(opts(join(dir, "none.json"), "nope-dsh"));
    expect(missing.launcher.ok).toBe(false);
    expect(missing.models_file.exists).toBe(false);
    expect(missing.models_file.problems[0]).toContain("every dsh model is refused");

    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{");
    expect(dshStatus(opts(bad)).models_file.problems[0]).toContain("not valid JSON");

    const mimo = join(dir, "mimo.json");
    writeFileSync(mimo, JSON.stringify({ models: { "mimo-v2": { model: "xiaomi/mimo-v2", enabled: true } } }));
    expect(dshStatus(opts(mimo)).models_file).toMatchObject({
      enabled: [],
      problems: [
        "mimo-v2 is enabled but refused: MiMo/Xiaomi models may not be dispatched automatically",
        "no model is enabled: every dsh task is refused",
      ],
    });
  });

  test("a non-executable launcher path is reported as such", async () => {
    const file = join(tempDir("dsh-noexec"), "dsh-herdr.sh");
    writeFileSync(file, "#!/bin/sh\n", { mode: 0o644 });
    expect(findDshLauncher(file, {})).toMatchObject({ ok: false, message: expect.stringContaining("not executable") });
  });
});
