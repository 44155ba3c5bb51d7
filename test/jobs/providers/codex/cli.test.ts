import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../../../../src/errors.ts";
import type { PollView } from "../../../../src/jobs/engine/poll.ts";
import { codexStatus } from "../../../../src/jobs/providers/codex/status.ts";
import { type FakeResponses, startFakeResponses } from "../../../fixture/fake-responses.ts";
import { type CodexRig, markerRouter, startCodexRig, writeAuthJson } from "../../../helpers/codex-home.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { makeRepo, pidAlive, until } from "../../helpers.ts";

/**
 * The real Codex CLI (@openai/codex 0.171.0) run by the job engine against a local fake
 * of the Responses API. Each test gets its own state dir and CODEX_HOME; one fake serves
 * them all, routed by markers in the task text (test/helpers/codex-home.ts).
 */

const root = tempDir("codex-cli");
let fake: FakeResponses;
const rigs: CodexRig[] = [];
let n = 0;

beforeAll(() => {
  fake = startFakeResponses(markerRouter());
});
// A test's services stop with it: an idle engine still ticks.
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.stop()));
});
afterAll(async () => {
  await fake.stop();
});

async function rig(over: Parameters<typeof startCodexRig>[1] = {}) {
  const dir = join(root, `t${++n}`);
  const r = await startCodexRig(dir, over, fake);
  rigs.push(r);
  const { trees } = makeRepo(dir, "repo", 2);
  return { ...r, trees };
}

const view = async (r: CodexRig, id: string) => (await r.service.poll([id])).jobs[0] as PollView;
const ended = (r: CodexRig, id: string, ms = 20_000) =>
  until(
    async () => {
      const v = await view(r, id);
      return ["queued", "running"].includes(v.status) ? null : v;
    },
    `job ${id} to end`,
    ms,
  );
const requestsFor = (marker: string) => fake.requests.filter((q) => q.prompt.includes(marker));

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
  }, 30_000);

  test("throttle → account cooldown → retried → done; the hint from the output is honoured", async () => {
    // Backoffs of 2 s: the window in which job a waits for its retry must outlast a poll
    // on a loaded machine (with 0.2 and 0.4 s, a full-suite run polled past both).
    const r = await rig({ backoffS: [2, 2, 2, 2, 2] });
    const t0 = performance.now();
    const [a, b] = (
      await r.service.submit([
        { task: "[throttle:2:plain] fix it", workdir: r.trees[0]! },
        { task: "[throttlehint:1:hinted] fix it too", workdir: r.trees[1]! },
      ])
    ).jobs.map((j) => j.id);
    // While cooling down, the account says so, and the job waiting for its retry shows
    // why it waits. Both are looked for, not their overlap at one poll: b's throttle (0.3 s
    // hint) can end the account's cooldown while a still waits out its own backoff, and
    // which comes first is the scheduler's choice on a loaded machine.
    let sawCooldown = false;
    let waiting: PollView | null = null;
    // Each state polled, with when it was first seen (said if the wait times out).
    const seen = new Map<string, number>();
    await until(
      async () => {
        const p = await r.service.poll([a!]);
        const v = p.jobs[0] as PollView;
        const state = `${p.account.state}/${v.status}/${v.retry_count}/${v.queue_reason}`;
        if (!seen.has(state)) seen.set(state, Math.round(performance.now() - t0));
        if (p.account.state === "cooldown") sawCooldown = true;
        if (v.status === "queued" && v.retry_count >= 1) waiting ??= v;
        return sawCooldown && waiting;
      },
      "the account cooling down and job a queued for its retry",
      30_000,
    ).catch((e) => {
      throw new Error(`${e}; first seen (ms): ${[...seen].map(([k, ms]) => `${k}@${ms}`).join(" ")}`);
    });
    expect(waiting).toMatchObject({ status: "queued", queue_reason: "throttle_cooldown" });
    expect(waiting!.retry_in_s).toBeGreaterThanOrEqual(0);
    const va = await ended(r, a!);
    const vb = await ended(r, b!);
    expect(va).toMatchObject({ status: "done", retry_count: 2, final_response: "done: [throttle:2:plain] fix it" });
    expect(vb).toMatchObject({ status: "done", retry_count: 1 });
    expect(requestsFor("[throttle:2:plain]")).toHaveLength(3);
    expect(requestsFor("[throttlehint:1:hinted]")).toHaveLength(2);
    expect(va.session_id).not.toBeNull();
    console.log(`codex throttle x2 + hinted x1 → done in ${Math.round(performance.now() - t0)} ms`);
  }, 60_000);

  test("usage limit → failed / quota, never retried", async () => {
    const r = await rig();
    const id = (await r.service.submit([{ task: "[usage:0:q] anything", workdir: r.trees[0]! }])).jobs[0]!.id;
    const v = await ended(r, id);
    expect(v).toMatchObject({ status: "failed", failure_kind: "quota", retry_count: 0, exit_code: 1 });
    expect(v.final_response).toContain("hit your usage limit");
    expect(requestsFor("[usage:0:q]")).toHaveLength(1);
    expect((await r.service.poll([])).account.state).toBe("ok");
  }, 30_000);

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
  }, 30_000);

  test("a hung endpoint → timeout; the CLI's whole group is killed", async () => {
    const r = await rig();
    const id = (await r.service.submit([{ task: "[hang:0:t] wait forever", workdir: r.trees[0]!, timeout_s: 2 }]))
      .jobs[0]!.id;
    const running = await until(() => r.service.engine.row(id)?.child_pgid ?? null, "the child to start");
    const v = await ended(r, id, 15_000);
    expect(v.status).toBe("timeout");
    expect(v.elapsed_s).toBeGreaterThanOrEqual(2);
    expect(v.elapsed_s).toBeLessThan(6);
    expect(pidAlive(running)).toBe(false);
  }, 30_000);

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
  }, 30_000);

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

    const strict = await startCodexRig(join(root, `t${++n}`), { quotaRefusePct: 90, codexHome: r.codexHome }, fake);
    rigs.push(strict);
    const e = await strict.service.submit([{ task: "x", workdir: r.trees[2]! }]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DlError);
    expect((e as DlError).message).toMatch(/weekly quota is at 91%.*allow_over_quota=true/);
    const over = await strict.service.submit([{ task: "[ok:0:over] x", workdir: r.trees[2]!, allow_over_quota: true }]);
    expect((await ended(strict, over.jobs[0]!.id)).status).toBe("done");
  }, 30_000);

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
