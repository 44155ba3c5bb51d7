import { describe, expect, test } from "bun:test";
import type { PollView } from "../../../../src/jobs/engine/poll.ts";
import { pidAlive, until } from "../../helpers.ts";
import { codexCliRigs } from "./cli-rigs.ts";

/**
 * The real Codex CLI run by the job engine against a local fake of the Responses API:
 * the two tests of cli.test.ts's suite that wait seconds by design (a job's retries after
 * throttles, a job's timeout), in a file of their own so their waits overlap the others'.
 */

const { rig, ended, requestsFor } = codexCliRigs("codex-cli-waits");

describe("codex jobs with the real CLI", () => {
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
      60_000,
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
  }, 180_000);

  test("a hung endpoint → timeout; the CLI's whole group is killed", async () => {
    const r = await rig();
    const id = (await r.service.submit([{ task: "[hang:0:t] wait forever", workdir: r.trees[0]!, timeout_s: 2 }]))
      .jobs[0]!.id;
    const running = await until(() => r.service.engine.row(id)?.child_pgid ?? null, "the child to start");
    const v = await ended(r, id);
    expect(v.status).toBe("timeout");
    expect(v.elapsed_s).toBeGreaterThanOrEqual(2);
    expect(v.elapsed_s).toBeLessThan(6);
    expect(pidAlive(running)).toBe(false);
  }, 120_000);
});
