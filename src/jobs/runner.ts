import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import type { JobStore } from "../store/jobs.ts";
import type { JobPatch, JobRow } from "../store/types.ts";
import { groupAlive, spawnGroup, terminateGroup } from "../sys/process.ts";
import type { Identities } from "./engine-ports.ts";
import type { Provider, RunOutput } from "./provider.ts";

/** Why the engine stopped a running job. */
export type JobStopCause = "cancel" | "shutdown";

export interface RunnerContext {
  /** Only update() is used: the runner writes its own row and nothing else. */
  store: Pick<JobStore, "update">;
  provider: Provider;
  identities: Identities;
  now: () => number;
  /** SIGTERM → SIGKILL grace when the engine stops a group. */
  graceMs: number;
  /** Bytes of stdout/stderr kept per stream. */
  outputCap: number;
  jobsDir: string;
  /** Throttled runs are replayed this many times before they count as failed. */
  maxRetries: number;
  /** Backoff before retry n (1-based), in ms. */
  retryDelayMs: (n: number) => number;
  /** A write of this job's state failed: the engine keeps it for poll and logs it. */
  onPersistError: (id: string, message: string) => void;
  /** Backoff (ms) between attempts of a write that must land (default 100/500/2000). */
  persistRetryMs?: readonly number[];
}

const ACTIVITY_WRITE_MS = 1000;
const PERSIST_RETRY_MS = [100, 500, 2000] as const;

/** A compare-and-set write: it landed, the row had left the expected status, or the store threw. */
type WriteResult = "changed" | "gone" | "error";

/**
 * Runs one claimed job (status already `running`) to its end and records the outcome.
 * Never throws: every failure ends up in the row (or in persist_error if the row
 * cannot be written). `signal` carries the JobStopCause when the engine stops it.
 */
export async function runJob(row: JobRow, ctx: RunnerContext, signal: AbortSignal): Promise<void> {
  const id = row.id;
  const retries = ctx.persistRetryMs ?? PERSIST_RETRY_MS;
  let lastError = "";
  const write = (patch: JobPatch, expect: JobRow["status"][] = ["running"]): WriteResult => {
    try {
      return ctx.store.update(id, patch, expect) ? "changed" : "gone";
    } catch (e) {
      lastError = describeError(e);
      ctx.onPersistError(id, lastError);
      return "error";
    }
  };
  /** A write that must land: retried with backoff while the store throws. */
  const persist = async (patch: JobPatch): Promise<WriteResult> => {
    let r = write(patch);
    for (const ms of retries) {
      if (r !== "error") break;
      await Bun.sleep(ms);
      r = write(patch);
    }
    return r;
  };
  /**
   * Records the job's end. If that keeps failing (a full disk, a value the store refuses)
   * a minimal `failed`/infra row naming the error is written instead: a row left
   * `running` would hold `dl wait` for ever.
   */
  const finish = async (patch: JobPatch, cause?: string): Promise<void> => {
    if (cause === undefined && (await persist(patch)) !== "error") return;
    const why = cause ?? `could not record the job's end (${lastError}); recorded as failed instead`;
    log.error(`job ${id}: ${why}`);
    const fallback: JobPatch = {
      status: "failed",
      failure_kind: "infra",
      exit_code: patch.exit_code ?? null,
      ended_at: patch.ended_at ?? ctx.now(),
      persist_error: why.slice(0, 500),
    };
    if ((await persist(fallback)) === "error")
      log.error(`job ${id}: its row stays running until this server restarts (the store keeps failing: ${lastError})`);
  };
  const fail = (kind: string, message: string) =>
    finish({ status: "failed", failure_kind: kind, final_response: message, ended_at: ctx.now() });

  const jobDir = join(ctx.jobsDir, id);
  let spec;
  try {
    mkdirSync(jobDir, { recursive: true, mode: 0o700 });
    spec = await ctx.provider.launch(row, { jobDir });
  } catch (e) {
    await fail("infra", `could not prepare the run: ${describeError(e)}`);
    return;
  }
  if (signal.aborted) {
    await finishStopped(signal, finish, ctx.now());
    return;
  }

  let lastWrite = 0;
  let child;
  try {
    child = spawnGroup({
      argv: spec.argv,
      env: spec.env,
      cwd: spec.cwd,
      stdoutCap: ctx.outputCap,
      stderrCap: ctx.outputCap,
      onOutput: () => {
        const t = ctx.now();
        if (t - lastWrite < ACTIVITY_WRITE_MS) return;
        lastWrite = t;
        write({ last_activity_at: t });
      },
    });
  } catch (e) {
    await fail("infra", describeError(e));
    return;
  }
  let stopping: Promise<unknown> | null = null;
  const stop = () => {
    stopping ??= terminateGroup(child.pgid, ctx.graceMs).catch((e) =>
      log.warn(`job ${id}: stopping its group failed: ${describeError(e)}`),
    );
  };
  const onAbort = () => stop();
  signal.addEventListener("abort", onAbort, { once: true });
  const ident = ctx.identities.read(child.pid);
  const recorded = await persist({
    child_pid: child.pid,
    child_pgid: child.pgid,
    child_start: ident?.startTime ?? null,
    child_cmd: ident?.command ?? null,
    last_activity_at: ctx.now(),
  });
  // "gone": the row was cancelled or reaped between claim and spawn, so the run must not
  // go on. "error": without its identity in the row, nobody could stop this child if we
  // died, so it must not go on either; the row is still ended below.
  if (recorded !== "changed" || signal.aborted) stop();
  const recordFailure =
    recorded === "error" ? `could not record the child process (${lastError}); it was stopped` : null;

  let timedOut = false;
  const startedAt = row.started_at ?? ctx.now();
  const budgetMs = (row.timeout_s ?? 3600) * 1000 - (ctx.now() - startedAt);
  const watchdog = setTimeout(
    () => {
      timedOut = true;
      stop();
    },
    Math.max(0, budgetMs),
  );

  const exit = await child.exited;
  clearTimeout(watchdog);
  signal.removeEventListener("abort", onAbort);
  if (stopping) await stopping;
  // Background processes the CLI forked and left behind die with the job.
  else if (groupAlive(child.pgid)) await terminateGroup(child.pgid, Math.min(ctx.graceMs, 500)).catch(() => undefined);
  const drainTimer = setTimeout(() => child.stopCapture(), 1000);
  await child.drained;
  clearTimeout(drainTimer);

  const out: RunOutput = {
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout: child.stdout().text(),
    stderr: child.stderr().text(),
    outputTruncated: child.stdout().truncated || child.stderr().truncated,
    durationMs: ctx.now() - startedAt,
    jobDir,
  };
  const ended = ctx.now();
  if (recorded === "gone") return;
  if (recordFailure) {
    await finish({ exit_code: out.exitCode, ended_at: ended }, recordFailure);
    return;
  }
  if (signal.aborted) {
    await finishStopped(signal, finish, ended, out.exitCode);
    return;
  }

  let parsed;
  try {
    parsed = ctx.provider.parse(out, row);
  } catch (e) {
    parsed = { finalResponse: null, warnings: [`could not read the result: ${describeError(e)}`] };
  }
  const warnings = [...(row.warnings ? (JSON.parse(row.warnings) as string[]) : []), ...(parsed.warnings ?? [])];
  if (out.outputTruncated) warnings.push(`output over ${ctx.outputCap} bytes was cut`);
  const common: JobPatch = {
    exit_code: out.exitCode,
    final_response: parsed.finalResponse,
    usage: parsed.usage ? JSON.stringify(parsed.usage) : null,
    session_id: parsed.sessionId ?? null,
    warnings: warnings.length ? JSON.stringify(warnings) : null,
    last_activity_at: lastWrite || null,
  };

  if (timedOut) {
    await finish({ ...common, status: "timeout", failure_kind: "timeout", ended_at: ended });
    return;
  }
  if (out.exitCode === 0) {
    await finish({ ...common, status: "done", failure_kind: null, ended_at: ended });
    return;
  }
  let kind;
  try {
    kind = ctx.provider.classify(out, row);
  } catch {
    kind = "other" as const;
  }
  if (kind === "throttle" && row.retry_count < ctx.maxRetries) {
    const n = row.retry_count + 1;
    await finish({
      ...common,
      status: "queued",
      queue_reason: "throttle_cooldown",
      retry_count: n,
      retry_at: ended + ctx.retryDelayMs(n),
      started_at: null,
      child_pid: null,
      child_pgid: null,
      child_start: null,
      child_cmd: null,
    });
    return;
  }
  if (kind === "auth") {
    await finish({ ...common, status: "auth_failed", failure_kind: "auth", ended_at: ended });
    return;
  }
  await finish({ ...common, status: "failed", failure_kind: kind, ended_at: ended });
}

function finishStopped(
  signal: AbortSignal,
  finish: (p: JobPatch) => Promise<void>,
  ended: number,
  exitCode: number | null = null,
): Promise<void> {
  const reason = signal.reason as JobStopCause;
  return finish({
    status: "cancelled",
    failure_kind: reason === "shutdown" ? "server_stopped" : null,
    exit_code: exitCode,
    ended_at: ended,
  });
}
