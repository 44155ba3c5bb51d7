import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../errors.ts";
import { log } from "../log.ts";
import type { JobStore } from "../store/jobs.ts";
import type { JobPatch, JobRow } from "../store/types.ts";
import { groupAlive, spawnGroup, terminateGroup } from "../sys/process.ts";
import type { Identities } from "./deps.ts";
import type { Provider, RunOutput } from "./provider.ts";

/** Why the engine stopped a running job. */
export type StopReason = "cancel" | "shutdown";

export interface RunnerContext {
  store: JobStore;
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
}

const ACTIVITY_WRITE_MS = 1000;

/**
 * Runs one claimed job (status already `running`) to its end and records the outcome.
 * Never throws: every failure ends up in the row (or in persist_error if the row
 * cannot be written). `signal` carries the StopReason when the engine stops it.
 */
export async function runJob(row: JobRow, ctx: RunnerContext, signal: AbortSignal): Promise<void> {
  const id = row.id;
  const write = (patch: JobPatch, expect: JobRow["status"][] = ["running"]): boolean => {
    try {
      return ctx.store.update(id, patch, expect);
    } catch (e) {
      ctx.onPersistError(id, describeError(e));
      return false;
    }
  };
  const fail = (kind: string, message: string) =>
    write({ status: "failed", failure_kind: kind, final_response: message, ended_at: ctx.now() });

  const jobDir = join(ctx.jobsDir, id);
  let spec;
  try {
    mkdirSync(jobDir, { recursive: true, mode: 0o700 });
    spec = await ctx.provider.launch(row, { jobDir });
  } catch (e) {
    fail("infra", `could not prepare the run: ${describeError(e)}`);
    return;
  }
  if (signal.aborted) {
    finishStopped(signal, write, ctx.now());
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
    fail("infra", describeError(e));
    return;
  }
  const ident = ctx.identities.read(child.pid);
  const recorded = write({
    child_pid: child.pid,
    child_pgid: child.pgid,
    child_start: ident?.start ?? null,
    child_cmd: ident?.command ?? null,
    last_activity_at: ctx.now(),
  });

  let timedOut = false;
  let stopping: Promise<unknown> | null = null;
  const stop = () => {
    stopping ??= terminateGroup(child.pgid, ctx.graceMs).catch((e) => log.warn(`job ${id}: stopping its group failed: ${describeError(e)}`));
  };
  // The row was cancelled or reaped between claim and spawn: the run must not go on.
  if (!recorded) stop();
  const startedAt = row.started_at ?? ctx.now();
  const budgetMs = (row.timeout_s ?? 3600) * 1000 - (ctx.now() - startedAt);
  const watchdog = setTimeout(() => {
    timedOut = true;
    stop();
  }, Math.max(0, budgetMs));
  const onAbort = () => stop();
  signal.addEventListener("abort", onAbort, { once: true });

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
  if (!recorded) return;
  if (signal.aborted) {
    finishStopped(signal, write, ended, out.exitCode);
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
    write({ ...common, status: "timeout", failure_kind: "timeout", ended_at: ended });
    return;
  }
  if (out.exitCode === 0) {
    write({ ...common, status: "done", failure_kind: null, ended_at: ended });
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
    write({
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
    write({ ...common, status: "auth_failed", failure_kind: "auth", ended_at: ended });
    return;
  }
  write({ ...common, status: "failed", failure_kind: kind, ended_at: ended });
}

function finishStopped(signal: AbortSignal, write: (p: JobPatch) => boolean, ended: number, exitCode: number | null = null): void {
  const reason = signal.reason as StopReason;
  write({
    status: "cancelled",
    failure_kind: reason === "shutdown" ? "server_stopped" : null,
    exit_code: exitCode,
    ended_at: ended,
  });
}
