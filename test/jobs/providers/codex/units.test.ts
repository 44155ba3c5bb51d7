import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../../../../src/errors.ts";
import { CodexAccount } from "../../../../src/jobs/providers/codex/account.ts";
import { classifyCodexFailure, MAX_HINT_MS, retryHintMs } from "../../../../src/jobs/providers/codex/classify.ts";
import { parseCodexEvents } from "../../../../src/jobs/providers/codex/events.ts";
import {
  CODEX_ALIASES,
  CODEX_MODELS,
  resolveCodexEffort,
  resolveCodexModel,
} from "../../../../src/jobs/providers/codex/models.ts";
import {
  CodexQuota,
  evaluateQuota,
  lastRateLimits,
  readLatestRateLimits,
} from "../../../../src/jobs/providers/codex/quota.ts";
import { buildCodexLaunch, codexTaskInput, validateCodexTask } from "../../../../src/jobs/providers/codex/task.ts";
import {
  CodexVersionGate,
  parseCodexVersion,
  probeCodexVersion,
  versionAtLeast,
} from "../../../../src/jobs/providers/codex/version.ts";
import type { JobRow } from "../../../../src/store/types.ts";
import { CODEX_BIN, codexChildEnv, tokenCountEvent, writeAuthJson, writeRollout } from "../../../helpers/codex-home.ts";
import { tempDir, tempFolder } from "../../../helpers/dl.ts";

const root = tempDir("codex-unit");
/** A fresh folder inside the suite's isolated root. */
const fresh = (name: string) => tempDir(name);
const OLD = join(import.meta.dir, "../../../fixture/fake-codex-old.sh");

function refusal(fn: () => unknown): DlError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DlError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("models", () => {
  test("full names, every documented alias, default and effort", () => {
    expect(CODEX_MODELS).toHaveLength(11);
    for (const m of CODEX_MODELS) expect(resolveCodexModel(m)).toEqual({ model: m, alias: null });
    expect(resolveCodexModel("sol").model).toBe("gpt-6.1-sol");
    expect(resolveCodexModel("luna").model).toBe("gpt-6-luna");
    expect(resolveCodexModel("astra").model).toBe("gpt-6-astra");
    expect(resolveCodexModel("terra").model).toBe("gpt-6.1-terra");
    expect(resolveCodexModel("6.1-terra").model).toBe("gpt-6.1-terra");
    expect(resolveCodexModel("6-sol").model).toBe("gpt-6-sol");
    expect(resolveCodexModel("5.6-luna").model).toBe("gpt-5.6-luna");
    expect(resolveCodexModel("5.5").model).toBe("gpt-5.5");
    expect(resolveCodexModel(" Sol ")).toEqual({ model: "gpt-6.1-sol", alias: "sol" });
    expect(Object.keys(CODEX_ALIASES)).toHaveLength(11);
    expect(resolveCodexModel(undefined).model).toBe("gpt-6.1-terra");
    expect(resolveCodexModel("", "luna").model).toBe("gpt-6-luna");
    expect(resolveCodexEffort(undefined)).toBe("low");
    expect(resolveCodexEffort("HIGH")).toBe("high");
    expect(refusal(() => resolveCodexEffort("turbo")).code).toBe("bad_input");
  });

  test("models that 400 on a subscription and unknown names are refused with the allowed list", () => {
    for (const bad of ["gpt-5.6", "gpt-5.6-codex", "gpt-6-codex"]) {
      const e = refusal(() => resolveCodexModel(bad));
      expect(e.message).toContain("400");
      expect(e.message).toContain("gpt-6.1-terra");
      expect(e.message).toContain("sol→gpt-6.1-sol");
    }
    const e = refusal(() => resolveCodexModel("gpt-4o"));
    expect(e.message).toMatch(/unknown Codex model "gpt-4o"; allowed: gpt-6.1-terra, gpt-6.1-sol/);
  });
});

describe("version gate", () => {
  test("parses and compares with Bun.semver", () => {
    expect(parseCodexVersion("codex-cli 0.171.0\n")).toBe("0.171.0");
    expect(parseCodexVersion("codex-cli 0.164.0-alpha.2")).toBe("0.164.0-alpha.2");
    expect(parseCodexVersion("nothing here")).toBeNull();
    expect(versionAtLeast("0.171.0")).toBe(true);
    expect(versionAtLeast("0.164.0")).toBe(true);
    expect(versionAtLeast("0.163.9")).toBe(false);
    expect(versionAtLeast("0.164.0-alpha.2")).toBe(false);
  });

  test("the real CLI passes; an old one gets an upgrade error; a missing one a clear error", async () => {
    const env = codexChildEnv(root);
    const real = await probeCodexVersion(CODEX_BIN, env);
    expect(real).toMatchObject({ ok: true, version: "0.171.0" });

    const old = await probeCodexVersion(OLD, env);
    expect(old).toMatchObject({ ok: false, reason: "too_old", version: "0.159.2" });
    if (!old.ok) expect(old.message).toMatch(/too old.*0\.164\.0 or newer.*never upgrades/);

    const gate = new CodexVersionGate(() => probeCodexVersion("codex-not-installed-here", env));
    const e = await gate.require().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DlError);
    expect((e as DlError).code).toBe("not_found");
    expect((e as DlError).message).toContain("DELEGATE_CODEX_BIN");
  });

  test("a failed probe is retried on the next use; a good one is cached", async () => {
    let calls = 0;
    let ok = false;
    const gate = new CodexVersionGate(async () => {
      calls++;
      return ok
        ? { ok: true, version: "0.171.0", path: "/x/codex" }
        : { ok: false, reason: "missing", version: null, message: "missing" };
    });
    expect((await gate.status()).ok).toBe(false);
    ok = true;
    expect(await gate.require()).toBe("/x/codex");
    await gate.require();
    expect(calls).toBe(2);
  });
});

const row = (over: Partial<JobRow> = {}): JobRow => ({
  seq: 1,
  id: "cx-1",
  provider: "codex",
  status: "running",
  queue_reason: null,
  project: "/p",
  workdir: "/w",
  workspace_root: "/w",
  model: "gpt-6.1-terra",
  effort: "low",
  task: "-fix the bug",
  params: JSON.stringify({ sandbox: "read-only", alias: null }),
  timeout_s: 60,
  owner_pid: 1,
  owner_start: "1",
  server_id: "s",
  child_pid: null,
  child_pgid: null,
  child_start: null,
  child_cmd: null,
  created_at: 0,
  started_at: 0,
  ended_at: null,
  last_activity_at: null,
  exit_code: null,
  failure_kind: null,
  final_response: null,
  usage: null,
  session_id: null,
  retry_count: 0,
  retry_at: null,
  warnings: null,
  persist_error: null,
  changes: null,
  origin_id: null,
  origin_pid: null,
  origin_start: null,
  ...over,
});

describe("task and argv", () => {
  const rules = { defaultModel: "gpt-6.1-terra", allowDanger: false };
  test("defaults, sandbox rules, refusals", () => {
    const t = validateCodexTask({ task: "do it", workdir: "/w" }, rules);
    expect(t).toMatchObject({
      model: "gpt-6.1-terra",
      effort: "low",
      timeoutS: 1800,
      params: { sandbox: "workspace-write", alias: null },
    });
    expect(validateCodexTask({ task: "x", workdir: "/w", sandbox: "read-only", model: "luna" }, rules).params).toEqual({
      sandbox: "read-only",
      alias: "luna",
    });
    expect(
      refusal(() => validateCodexTask({ task: "x", workdir: "/w", sandbox: "danger-full-access" }, rules)).message,
    ).toContain("DELEGATE_CODEX_ALLOW_DANGER=1");
    expect(
      validateCodexTask({ task: "x", workdir: "/w", sandbox: "danger-full-access" }, { ...rules, allowDanger: true })
        .params.sandbox,
    ).toBe("danger-full-access");
    expect(refusal(() => validateCodexTask({ task: "x", workdir: "/w", sandbox: "yolo" }, rules)).code).toBe(
      "bad_input",
    );
    expect(refusal(() => validateCodexTask({ task: "", workdir: "/w" }, rules)).code).toBe("bad_input");
    expect(refusal(() => validateCodexTask({ task: "x", workdir: "/w", timeout_s: -1 }, rules)).code).toBe("bad_input");
    expect(refusal(() => validateCodexTask({ task: "x", workdir: "/w", colour: "red" }, rules)).message).toContain(
      '"colour"',
    );
    expect(refusal(() => validateCodexTask({ task: "x".repeat(130_000), workdir: "/w" }, rules)).message).toContain(
      "bytes",
    );
  });

  test("one schema for the MCP edge and the engine: a fractional timeout_s is refused by both, with the rule", () => {
    const task = { task: "x", workdir: "/w", timeout_s: 90.5 };
    expect(codexTaskInput().safeParse(task).success).toBe(false);
    const e = refusal(() => validateCodexTask(task, rules));
    expect(e.code).toBe("bad_input");
    expect(e.message).toContain("whole number of seconds from 1 to 86400");
    expect(validateCodexTask({ ...task, timeout_s: 90 }, rules).timeoutS).toBe(90);
    expect(refusal(() => validateCodexTask({ ...task, timeout_s: 86_401 }, rules)).message).toContain("whole number");
    expect(refusal(() => validateCodexTask({ task: "   ", workdir: "/w" }, rules)).message).toContain("non-empty");
    expect(refusal(() => validateCodexTask(["x"], rules)).message).toContain("must be an object");
    // Whatever the MCP tool accepted, the engine accepts too (same object, validated the same way).
    const accepted = codexTaskInput().parse({ task: "y", workdir: "/w", sandbox: "read-only", allow_over_quota: true });
    expect(validateCodexTask(accepted, rules).allowOverQuota).toBe(true);
  });

  test("argv: exec --json, sandbox, effort, per-run sqlite_home, chatgpt login, -o, the prompt on stdin; env allowlisted + CODEX_HOME", () => {
    using dir = tempFolder("codex-launch");
    const jobDir = join(dir.dir, "cx-1");
    mkdirSync(jobDir);
    const spec = buildCodexLaunch(row(), jobDir, {
      bin: "/bin/codex",
      codexHome: "/h/.codex",
      childEnv: { PATH: "/bin", HOME: "/h" },
      allowDanger: false,
    });
    expect(spec.argv).toEqual([
      "/bin/codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--sandbox",
      "read-only",
      "-c",
      'model_reasoning_effort="low"',
      "-c",
      `sqlite_home="${jobDir}/sqlite"`,
      "-c",
      'forced_login_method="chatgpt"',
      "--output-last-message",
      `${jobDir}/last-message.txt`,
      "--model",
      "gpt-6.1-terra",
      "--",
      "-",
    ]);
    // The task is read from a private file on stdin: argv is readable by every local user.
    expect(spec.stdinFile).toBe(join(jobDir, "task.md"));
    expect(readFileSync(spec.stdinFile!, "utf8")).toBe("-fix the bug");
    expect(statSync(spec.stdinFile!).mode & 0o777).toBe(0o600);
    expect(spec.env).toEqual({ PATH: "/bin", HOME: "/h", CODEX_HOME: "/h/.codex" });
    expect(spec.cwd).toBe("/w");
    const danger = row({ params: JSON.stringify({ sandbox: "danger-full-access" }) });
    expect(() =>
      buildCodexLaunch(danger, "/j", { bin: "c", codexHome: "/h", childEnv: {}, allowDanger: false }),
    ).toThrow(/ALLOW_DANGER/);
  });
});

describe("events and classification (texts of codex-cli 0.171.0)", () => {
  test("session id, final message, usage summed over turns; junk lines skipped", () => {
    const out = [
      '{"type":"thread.started","thread_id":"th-1"}',
      "not json",
      '{"type":"item.completed","item":{"id":"i0","type":"command_execution","command":"ls"}}',
      '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"first"}}',
      '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":2,"output_tokens":3,"reasoning_output_tokens":1}}',
      '{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"final"}}',
      '{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":4,"reasoning_output_tokens":0}}',
      '{"type":"some.future.event"}',
    ].join("\n");
    const ev = parseCodexEvents(out);
    expect(ev.sessionId).toBe("th-1");
    expect(ev.finalMessage).toBe("final");
    expect(ev.usage).toEqual({
      input_tokens: 15,
      cached_input_tokens: 2,
      output_tokens: 7,
      reasoning_output_tokens: 1,
      total_tokens: 22,
    });
    expect(ev.items).toEqual({ command_execution: 1, agent_message: 2 });
  });

  const cls = (msg: string, stderr = "") => classifyCodexFailure({ exitCode: 1, signal: null, errors: [msg], stderr });
  test("quota, throttle (with and without hint), auth, infra, other", () => {
    expect(
      cls(
        "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 11:31 AM.",
      ).kind,
    ).toBe("quota");
    expect(cls("exceeded retry limit, last status: 429 Too Many Requests")).toEqual({
      kind: "throttle",
      hintMs: null,
      message: "exceeded retry limit, last status: 429 Too Many Requests",
    });
    expect(cls("rate limit exceeded: Rate limit reached for gpt-6.1-terra. Please try again in 7.5s.")).toMatchObject({
      kind: "throttle",
      hintMs: 7500,
    });
    expect(cls("unexpected status 401 Unauthorized: Invalid token, url: http://127.0.0.1:1/v1/responses").kind).toBe(
      "auth",
    );
    expect(cls("We’re currently experiencing high demand, which may cause temporary errors.").kind).toBe("infra");
    expect(
      cls(
        "Your access token could not be refreshed because you have since logged out or signed in to another account. Please sign in again.",
      ).kind,
    ).toBe("auth");
    expect(cls("ChatGPT login is required, but an API key is currently being used. Logging out.").kind).toBe("auth");
    expect(
      classifyCodexFailure({
        exitCode: 1,
        signal: null,
        errors: [],
        stderr:
          "WARNING: proceeding\nfailed to deserialize CLI auth from file: invalid credential JSON (Data at line 1 column 46)\n",
      }).kind,
    ).toBe("auth");
    expect(cls("Reconnecting... waiting for network (Connection failed: error sending request)").kind).toBe("infra");
    expect(cls("the model refused").kind).toBe("other");
    // A provider variable that never reached Codex is the user's setup, not a login.
    const missing = cls("Missing environment variable: `AZURE_OPENAI_API_KEY`.");
    expect(missing.kind).toBe("config");
    expect(missing.message).toContain("AZURE_OPENAI_API_KEY");
    expect(missing.message).toContain("DELEGATE_CODEX_ENV_PASSTHROUGH");
    expect(classifyCodexFailure({ exitCode: null, signal: "SIGKILL", errors: [], stderr: "" })).toMatchObject({
      kind: "infra",
      message: "killed by SIGKILL",
    });
    // stderr decides only when the events are silent; its routine warnings are not the message.
    expect(
      classifyCodexFailure({
        exitCode: 1,
        signal: null,
        errors: [],
        stderr: "WARNING: proceeding, even though\nerror: 429 Too Many Requests\n",
      }),
    ).toMatchObject({ kind: "throttle", message: "error: 429 Too Many Requests" });
  });

  test("retry hints", () => {
    expect(retryHintMs("Please try again in 250ms.")).toBe(250);
    expect(retryHintMs("try again in 1m30s")).toBe(90_000);
    expect(retryHintMs("Retry-After: 9")).toBe(9000);
    expect(retryHintMs("try again in 99999s")).toBe(MAX_HINT_MS);
    expect(retryHintMs("try again at 11:31 AM")).toBeNull();
  });
});

describe("account state shared through the state dir", () => {
  test("a throttle cools down every server; backoff grows 5/10/20/40/60; three in 5 min halve the cap for 10 min", () => {
    const dir = fresh("acct");
    let now = 1_000_000;
    const a = new CodexAccount({ stateDir: dir, codexHome: fresh("home"), now: () => now, random: () => 0.5 });
    const b = new CodexAccount({ stateDir: dir, codexHome: fresh("home"), now: () => now, random: () => 0.5 }); // another server
    expect(a.gate()).toBeNull();
    expect(a.recordThrottle(1, null)).toBe(5000);
    expect(b.gate()).toBe("throttle_cooldown");
    expect(b.retryDelayMs(1)).toBe(5000);
    now += 5001;
    expect(b.gate()).toBeNull();
    expect(b.recordThrottle(1, null)).toBe(10_000); // second throttle in the window: next step
    expect(a.effectiveCap(8)).toBeNull();
    now += 10_001;
    expect(a.recordThrottle(1, 7500)).toBe(7875); // a hint wins over the step (jitter ≤ 10 %)
    expect(b.effectiveCap(8)).toBe(4);
    const v = b.view(8, 6);
    expect(v).toMatchObject({
      state: "cooldown",
      adaptive_cap: true,
      recent_throttles: 3,
      effective_caps: { global: 4, per_project: 3 },
    });
    now += 10 * 60_000 + 1;
    expect(a.effectiveCap(8)).toBeNull();
    expect(a.view(8, 6)).toMatchObject({
      state: "ok",
      adaptive_cap: false,
      effective_caps: { global: 8, per_project: 6 },
    });
    const steps = [1, 2, 3, 4, 5, 6].map(() => a.recordThrottle(1, null));
    expect(steps).toEqual([5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });

  test("auth failure pauses admission until auth.json changes, on every server", () => {
    const dir = fresh("acct");
    const home = fresh("home");
    writeAuthJson(home, "old-login");
    const a = new CodexAccount({ stateDir: dir, codexHome: home });
    const b = new CodexAccount({ stateDir: dir, codexHome: home });
    a.recordAuthFailure();
    expect(b.gate()).toBe("auth_failed");
    expect(b.view(8, 6).state).toBe("auth_failed");
    writeAuthJson(home, "new-login");
    expect(b.gate()).toBeNull();
    expect(a.gate()).toBeNull();
    expect(a.read().auth).toBeNull();
  });
});

describe("quota from the session files", () => {
  test("latest rate_limits across rollout files; warn above the threshold; refuse only when set, unless allowed", async () => {
    const home = fresh("home");
    const t0 = new Date();
    writeRollout(home, "2026-11-27", "a", [tokenCountEvent(t0, 99, 99)]);
    const newest = writeRollout(home, "2026-11-28", "b", [
      tokenCountEvent(t0, 10, 50),
      { type: "event_msg", payload: { type: "token_count", rate_limits: null } },
      tokenCountEvent(t0, 40, 91),
    ]);
    const older = join(home, "sessions/2026/11/27/rollout-2026-11-27T00-00-00-a.jsonl");
    const past = new Date(Date.now() - 3_600_000);
    const { utimesSync } = await import("node:fs");
    utimesSync(older, past, past);
    expect(newest).toContain("rollout-");
    const snap = await readLatestRateLimits(home);
    expect(snap?.primary?.used_percent).toBe(40);
    expect(snap?.secondary).toMatchObject({ used_percent: 91, window_minutes: 10080 });

    const now = Date.now();
    const warn = evaluateQuota(snap, { warnPct: 85, now });
    expect(warn.refuse).toBeNull();
    expect(warn.warnings).toHaveLength(1);
    expect(warn.warnings[0]).toMatch(/weekly quota at 91% \(warning above 85%\); it resets at 20/);
    expect(evaluateQuota(snap, { warnPct: 85, refusePct: 90, now }).refuse).toMatch(
      /weekly quota is at 91%.*allow_over_quota=true/,
    );
    expect(evaluateQuota(snap, { warnPct: 85, refusePct: 90, allowOver: true, now }).warnings).toHaveLength(1);
    // A window whose reset time passed no longer counts.
    expect(evaluateQuota(snap, { warnPct: 85, now: now + 30 * 86_400_000 }).warnings).toHaveLength(0);

    const q = new CodexQuota({ codexHome: home, warnPct: 85, refusePct: 95 });
    await q.refresh();
    expect(q.check()).toHaveLength(1);
    expect(lastRateLimits('garbage\n{"half')).toBeNull();
    expect(await readLatestRateLimits(fresh("empty-home"))).toBeNull();
  });
});
