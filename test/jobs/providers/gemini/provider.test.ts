import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "../../../../src/config.ts";
import { agentSettingsFromConfig } from "../../../../src/dispatch/agent-settings.ts";
import { DlError, isDlError } from "../../../../src/errors.ts";
import { chooseOutcome } from "../../../../src/jobs/engine/job-outcome.ts";
import type { PollView } from "../../../../src/jobs/engine/poll.ts";
import { buildGeminiLaunch, type GeminiJailInputs } from "../../../../src/jobs/providers/gemini/launch.ts";
import { geminiProvider } from "../../../../src/jobs/providers/gemini/provider.ts";
import { agyArgv, validateGeminiTask } from "../../../../src/jobs/providers/gemini/task.ts";
import type { GitGuardResult, JailProbe } from "../../../../src/sandbox/index.ts";
import type { JobRow } from "../../../../src/store/types.ts";
import { protectedDirs } from "../../../../src/sys/paths.ts";
import { testProvider, testTask } from "../../../fixture/jobs-provider.ts";
import { tempFolder } from "../../../helpers/dl.ts";
import { makeRepo, runOutput, startEngine, until } from "../../helpers.ts";

const root = tempFolder("dl-gemini");
afterAll(root.cleanup);
const home = join(root.dir, "home");
mkdirSync(home);

const OK_PROBE: JailProbe = {
  kind: "bwrap",
  ok: true,
  detail: "bwrap works",
  fix: null,
  bin: "/usr/bin/bwrap",
  forwarder: "/usr/bin/pasta",
};
const NO_USERNS: JailProbe = {
  kind: "bwrap",
  ok: false,
  detail: "bwrap is installed but cannot start a jail: setting up uid map: Permission denied",
  fix: "enable unprivileged user namespaces",
  bin: "/usr/bin/bwrap",
};

function inputs(over: Partial<GeminiJailInputs> = {}): GeminiJailInputs {
  return {
    platform: "linux",
    home,
    stateDirs: [join(root.dir, "state")],
    childEnv: { PATH: "/usr/bin:/bin", HOME: home },
    probe: async () => OK_PROBE,
    gitGuard: async () => ({ ok: true, checked: true }),
    ...over,
  };
}

const row = (over: Partial<JobRow> = {}) =>
  ({
    id: "gm-1",
    task: "fix it",
    effort: "medium",
    workdir: makeRepo(root.dir, `r${Math.random()}`).repo,
    ...over,
  }) as JobRow;

const out = (over: Parameters<typeof runOutput>[1]) => runOutput(root.dir, over);

async function refusal(p: Promise<unknown>): Promise<DlError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  if (!isDlError(e)) throw new Error(`expected a DlError, got ${String(e)}`);
  return e;
}

describe("the Gemini task", () => {
  test("effort picks the model (low by default); anything else is refused with the allowed list", () => {
    expect(validateGeminiTask({ task: "t", workdir: "/w" })).toMatchObject({
      model: "gemini-3.8-flash-low",
      effort: "low",
      timeoutS: 1800,
    });
    expect(validateGeminiTask({ task: "t", workdir: "/w", effort: "high", timeout_s: 60 })).toMatchObject({
      model: "gemini-3.8-flash-high",
      timeoutS: 60,
    });
    expect(() => validateGeminiTask({ task: "t", workdir: "/w", effort: "max" })).toThrow("low, medium, high");
    expect(() => validateGeminiTask({ task: "t", workdir: "/w", model: "claude-x" })).toThrow("unknown task field");
    expect(() => validateGeminiTask({ task: " ", workdir: "/w" })).toThrow("non-empty");
  });

  test("agy runs with -p, JSON output, no permission prompts and the effort's model", () => {
    expect(agyArgv("/opt/agy", row({ task: "do x", effort: "high" }))).toEqual([
      "/opt/agy",
      "-p",
      "do x",
      "--output-format",
      "json",
      "--dangerously-skip-permissions",
      "--model",
      "gemini-3.8-flash-high",
    ]);
  });
});

describe("the jailed launch refuses before anything runs", () => {
  test("no usable jail: jail_unavailable, naming the fix", async () => {
    const e = await refusal(
      buildGeminiLaunch(row(), "/usr/bin/agy", inputs({ probe: async () => NO_USERNS }), {
        jobDir: join(root.dir, "job"),
      }),
    );
    expect(e.data.failure_kind).toBe("jail_unavailable");
    expect(e.message).toContain("enable unprivileged user namespaces");
    const win = await refusal(
      buildGeminiLaunch(row(), "/usr/bin/agy", inputs({ platform: "win32" }), { jobDir: join(root.dir, "job") }),
    );
    expect(win.data.failure_kind).toBe("jail_unavailable");
  });

  test("unsafe git config: jail_git_config with the hint", async () => {
    const gitGuard = async (): Promise<GitGuardResult> => ({
      ok: false,
      failure_kind: "jail_git_config",
      hint: "git branch --unset-upstream",
      message: "the workdir's git config points at a local path outside the jail",
      offending: [],
    });
    const e = await refusal(
      buildGeminiLaunch(row(), "/usr/bin/agy", inputs({ gitGuard }), { jobDir: join(root.dir, "job") }),
    );
    expect(e.data).toMatchObject({ failure_kind: "jail_git_config", hint: "git branch --unset-upstream" });
    expect(e.message).toContain("git branch --unset-upstream");
  });

  test("agy in a directory holding HOME is refused rather than exposing HOME", async () => {
    const e = await refusal(
      buildGeminiLaunch(row(), join(root.dir, "agy"), inputs(), { jobDir: join(root.dir, "job") }),
    );
    expect(e.code).toBe("bad_config");
  });

  test("a good launch is bwrap around agy, with HOME set and the environment passed inside", async () => {
    const spec = await buildGeminiLaunch(row(), "/usr/bin/agy", inputs(), { jobDir: join(root.dir, "job") });
    expect(spec.argv[0]).toBe("/usr/bin/bwrap");
    expect(spec.argv.slice(-8)).toEqual(agyArgv("/usr/bin/agy", row()));
    expect(spec.env.HOME).toBe(home);
    expect(spec.argv).not.toContain("--setenv");
  });
});

describe("reading a run", () => {
  const p = geminiProvider({ ...inputs(), bin: "agy" });
  test("exit 0 with JSON is the response; exit 0 without JSON fails with an excerpt", async () => {
    const good = await p.parse(
      out({ stdout: '{"response":"hi","session_id":"s1","usage":{"input_tokens":3}}' }),
      row(),
    );
    expect(good).toMatchObject({ finalResponse: "hi", sessionId: "s1", usage: { input_tokens: 3 } });
    expect(good.failure).toBeUndefined();
    const bad = await p.parse(out({ stdout: "plain words" }), row());
    expect(bad.failure).toBe("other");
    expect(bad.finalResponse).toContain("plain words");
  });

  test("an auth error is auth (auth_failed), quota text is quota", async () => {
    const auth = out({ exitCode: 1, stderr: "Error: not signed in." });
    expect(p.classify(auth, row())).toBe("auth");
    expect((await p.parse(auth, row())).finalResponse).toContain("agy session not readable in the jail");
    expect(p.classify(out({ exitCode: 1, stderr: "RESOURCE_EXHAUSTED: quota" }), row())).toBe("quota");
  });

  test("the runner's decision: an exit-0 output failure fails without asking classify", () => {
    const classify = () => {
      throw new Error("not for exit 0");
    };
    const base = { timedOut: false, exitCode: 0, classify, retryCount: 0, maxRetries: 0 };
    expect(chooseOutcome({ ...base, outputFailure: "other" })).toEqual({ status: "failed", failureKind: "other" });
    expect(chooseOutcome({ ...base, outputFailure: "auth" })).toEqual({ status: "auth_failed", failureKind: "auth" });
    expect(chooseOutcome({ ...base, outputFailure: null })).toEqual({ status: "done", failureKind: null });
  });
});

test("the engine records a launch refusal with its failure_kind and message, and runs nothing", async () => {
  const refusing = {
    ...testProvider,
    launch(): never {
      throw new DlError("jail_unavailable", "the jail cannot start; fix: install bubblewrap", {
        failure_kind: "jail_unavailable",
      });
    },
  };
  const engine = await startEngine(join(root.dir, "engine-state"), home, { provider: refusing });
  try {
    const repo = makeRepo(root.dir, "engine-repo").repo;
    const id = (await engine.submit([testTask(repo, { mode: "ok" })])).jobs[0]!.id;
    const v = await until(() => {
      const x = engine.poll([id])[0] as PollView;
      return x.status === "failed" ? x : null;
    }, "the refused job to fail");
    expect(v).toMatchObject({ failure_kind: "jail_unavailable", exit_code: null });
    expect(v.final_response).toBe("the jail cannot start; fix: install bubblewrap");
    expect(engine.row(id)?.child_pid).toBeNull();
  } finally {
    await engine.stop();
  }
});

test("the Gemini and run_bash jail settings come from the one Config", () => {
  const env = { HOME: home, PATH: "/usr/bin:/bin" };
  const off = parseConfig(env, { home, cwd: home });
  expect(off.agent.runBashSandbox).toBe(false);
  expect(agentSettingsFromConfig(off).bash.jail).toBeNull();
  // What the Gemini service reads (service.ts startJobs): its section, its state dir, and dl's state dirs hidden in the jail.
  expect(off.gemini).toMatchObject({ bin: "agy", allowDanger: false, caps: { maxConcurrent: 4, maxQueue: 32 } });
  expect(off.paths.stateDirs.gemini).toBe(join(home, ".gemini-jobs"));
  expect(protectedDirs(off.paths)).toContain(join(home, ".codex-jobs"));

  const on = parseConfig(
    {
      ...env,
      DELEGATE_RUN_BASH_SANDBOX: "1",
      DELEGATE_AGY_BIN: "/opt/agy/agy",
      DELEGATE_GEMINI_ALLOW_DANGER: "1",
      DELEGATE_GEMINI_MAX_CONCURRENT: "2",
      DELEGATE_GEMINI_MAX_QUEUE: "5",
      DELEGATE_GEMINI_STATE_DIR: join(root.dir, "gm-state"),
    },
    { home, cwd: home },
  );
  expect(agentSettingsFromConfig(on).bash.jail).not.toBeNull();
  expect({ ...on.gemini, stateDir: on.paths.stateDirs.gemini }).toMatchObject({
    bin: "/opt/agy/agy",
    allowDanger: true,
    caps: { maxConcurrent: 2, maxQueue: 5 },
    stateDir: join(root.dir, "gm-state"),
  });
});
