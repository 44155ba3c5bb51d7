import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../../../../src/errors.ts";
import { codexStatus } from "../../../../src/jobs/providers/codex/status.ts";
import { writeAuthJson } from "../../../helpers/codex-home.ts";
import { pidAlive, until } from "../../helpers.ts";
import { codexCliRigs } from "./cli-rigs.ts";

/**
 * The real Codex CLI (@openai/codex 0.171.0) run by the job engine against a local fake
 * of the Responses API. Each test gets its own state dir and CODEX_HOME; one fake serves
 * them all, routed by markers in the task text (test/helpers/codex-home.ts). The two
 * tests that wait seconds by design (retries after throttles, a timeout) are in
 * cli-throttle-timeout.test.ts, so both files' waits overlap in a parallel run.
 */

const { service, rig, view, ended, requestsFor } = codexCliRigs("codex-cli");

describe("codex jobs with the real CLI", () => {
  test("success: final message, usage, session id; the request carries model, effort and the task", async () => {
    const r = await rig();
    const sub = await r.service.submit([
      { task: "[ok:1:success] write the report", workdir: r.trees[0]!, model: "luna", effort: "medium" },
    ]);
    expect(sub.watch).toBe(`dl wait ${sub.jobs[0]!.id}`);
    expect(sub.jobs[0]!.warnings).toEqual(["model alias luna → gpt-6-luna"]);
    const v = await ended(r, sub.jobs[0]!.id);
    expect(v.status).toBe("done");
    expect(v.exit_code).toBe(0);
    expect(v.final_response).toBe("done: [ok:1:success] write the report");
    expect(v.model).toBe("gpt-6-luna");
    expect(v.usage).toMatchObject({
      input_tokens: 120,
      cached_input_tokens: 20,
      output_tokens: 30,
      reasoning_output_tokens: 10,
      total_tokens: 150,
      turns: 1,
    });
    expect(v.session_id).toMatch(/^[0-9a-f-]{36}$/);
    const [req] = requestsFor("[ok:1:success]");
    expect(req).toMatchObject({
      model: "gpt-6-luna",
      effort: "medium",
      sessionId: v.session_id,
      authorization: "Bearer fake-token-not-secret",
    });
    // Per-run SQLite home inside the job dir; the session log stays in CODEX_HOME.
    expect(readdirSync(join(r.stateDir, "jobs", v.id, "sqlite")).some((f) => f.endsWith(".sqlite"))).toBe(true);
    expect(existsSync(join(r.codexHome, "sessions"))).toBe(true);
    console.log(`codex success: ${v.elapsed_s}s, usage ${JSON.stringify(v.usage)}`);
  }, 120_000);

  test("usage limit → failed / quota, never retried", async () => {
    const r = await rig();
    const id = (await r.service.submit([{ task: "[usage:0:q] anything", workdir: r.trees[0]! }])).jobs[0]!.id;
    const v = await ended(r, id);
    expect(v).toMatchObject({ status: "failed", failure_kind: "quota", retry_count: 0, exit_code: 1 });
    expect(v.final_response).toContain("hit your usage limit");
    expect(requestsFor("[usage:0:q]")).toHaveLength(1);
    expect((await r.service.poll([])).account.state).toBe("ok");
  }, 120_000);

  test("401 → auth_failed; admission pauses (queue_reason auth_failed) until auth.json changes, then resumes", async () => {
    // No auth.json at first (the fake's 401 reaches the CLI as is); a login writes one.
    const r = await rig();
    const bad = (await r.service.submit([{ task: "[unauth:0:a] go", workdir: r.trees[0]! }])).jobs[0]!.id;
    const v = await ended(r, bad);
    expect(v).toMatchObject({ status: "auth_failed", failure_kind: "auth", retry_count: 0 });
    expect(v.final_response).toContain("401 Unauthorized");
    expect((await r.service.poll([])).account).toMatchObject({ state: "auth_failed" });
    const next = (await r.service.submit([{ task: "[ok:0:after-login] go", workdir: r.trees[1]! }])).jobs[0]!.id;
    await until(async () => (await view(r, next)).queue_reason === "auth_failed", "queue_reason auth_failed");
    expect(requestsFor("[ok:0:after-login]")).toHaveLength(0);
    writeAuthJson(r.codexHome, "login-2");
    expect((await ended(r, next)).status).toBe("done");
    expect((await r.service.poll([])).account.state).toBe("ok");
  }, 120_000);

  test("cancel a running job and a queued one: both end cancelled, slots free again", async () => {
    const r = await rig({ caps: { maxConcurrent: 1, maxPerProject: 1, maxQueue: 32, staggerS: 0 } });
    const [run, queued] = (
      await r.service.submit([
        { task: "[hang:0:c1] busy", workdir: r.trees[0]! },
        { task: "[ok:0:c2] later", workdir: r.trees[1]! },
      ])
    ).jobs.map((j) => j.id);
    await until(() => requestsFor("[hang:0:c1]").length > 0, "the running job to reach the fake");
    expect(await view(r, queued!)).toMatchObject({ status: "queued", queue_reason: "global_cap" });
    const pgid = r.service.engine.row(run!)!.child_pgid!;
    expect((await r.service.cancel(queued!)).status).toBe("cancelled");
    expect((await r.service.cancel(run!)).status).toBe("cancelled");
    expect(pidAlive(pgid)).toBe(false);
    expect((await r.service.cancel(run!)).changed).toBe(false);
    const again = (await r.service.submit([{ task: "[ok:0:c3] now", workdir: r.trees[0]! }])).jobs[0]!.id;
    expect((await ended(r, again)).status).toBe("done");
    expect(requestsFor("[ok:0:c2]")).toHaveLength(0);
  }, 120_000);

  test("quota warning from the session files the CLI wrote; refusal only when a threshold is set", async () => {
    const r = await rig();
    const first = (await r.service.submit([{ task: "[rl:91:w] touch nothing", workdir: r.trees[0]! }])).jobs[0]!.id;
    expect((await ended(r, first)).warnings).toEqual([]);
    const second = await r.service.submit([{ task: "[ok:0:w2] next", workdir: r.trees[1]! }]);
    expect(second.jobs[0]!.warnings).toHaveLength(1);
    expect(second.jobs[0]!.warnings[0]).toMatch(/^Codex weekly quota at 91% \(warning above 85%\); it resets at /);
    expect((await ended(r, second.jobs[0]!.id)).warnings).toEqual(second.jobs[0]!.warnings);
    const status = await codexStatus(r.config);
    expect(status.quota.windows.map((w) => [w.name, w.used_percent])).toEqual([
      ["5h", 20],
      ["weekly", 91],
    ]);

    const strict = await service({ quotaRefusePct: 90, codexHome: r.codexHome });
    const e = await strict.service.submit([{ task: "x", workdir: r.trees[2]! }]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DlError);
    expect((e as DlError).message).toMatch(/weekly quota is at 91%.*allow_over_quota=true/);
    const over = await strict.service.submit([{ task: "[ok:0:over] x", workdir: r.trees[2]!, allow_over_quota: true }]);
    expect((await ended(strict, over.jobs[0]!.id)).status).toBe("done");
  }, 120_000);

  test("a missing or too-old CLI: the service still starts, submit explains, nothing is queued", async () => {
    const missing = await rig({ bin: "codex-not-installed-here" });
    const e1 = await missing.service.submit([{ task: "x", workdir: missing.trees[0]! }]).catch((x: unknown) => x);
    expect(e1).toMatchObject({ code: "not_found" });
    expect((e1 as DlError).message).toMatch(/not found on PATH.*DELEGATE_CODEX_BIN/);
    expect((await codexStatus(missing.config)).cli).toMatchObject({ ok: false, reason: "missing" });
    const old = await rig({ bin: join(import.meta.dir, "../../../fixture/fake-codex-old.sh") });
    const e2 = await old.service.submit([{ task: "x", workdir: old.trees[0]! }]).catch((x: unknown) => x);
    expect(e2).toMatchObject({ code: "bad_config" });
    expect((e2 as DlError).message).toMatch(/codex-cli 0\.159\.2 is too old.*0\.164\.0 or newer/);
    expect(missing.service.engine.list()).toHaveLength(0);
    expect(old.service.engine.list()).toHaveLength(0);
  });
});
