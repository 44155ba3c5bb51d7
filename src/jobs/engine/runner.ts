import { dirname, join } from "node:path";
import { describeError, isDlError } from "../../errors.ts";
import { log } from "../../log.ts";
import { jailFailureMessage } from "../../sandbox/jail-causes.ts";
import type { JobPatch, JobRow } from "../../store/types.ts";
import { privateDir } from "../../sys/private-file.ts";
import { type RunResult, runGroup } from "../../sys/process.ts";
import { scrubJobDir } from "./job-files.ts";
import { chooseOutcome, type JobStopCause, outcomePatch, stoppedPatch } from "./job-outcome.ts";
import type { Identities } from "./machine.ts";
import { reserveOutcome } from "./outcome-file.ts";
import { keepOutputTail } from "./output-tail.ts";
import type { LaunchSpec, ParsedResult, Provider, RunCheck, RunOutput } from "./provider.ts";
import { JobRowWriter, type RowWriterOptions, type WriteResult } from "./row-writer.ts";

export interface RunnerContext extends RowWriterOptions {
  provider: Provider;
  identities: Identities;
  /** SIGTERM → SIGKILL grace when the engine stops a group. */
  graceMs: number;
  /** Bytes of stdout/stderr kept per stream. */
  outputCap: number;
  jobsDir: string;
  /** Throttled runs are replayed this many times before they count as failed. */
  maxRetries: number;
  /** Backoff before retry n (1-based), in ms. */
  retryDelayMs: (n: number) => number;
}

const ACTIVITY_WRITE_MS = 1000;
/** Budget of a row written without a timeout (older rows). */
const DEFAULT_BUDGET_S = 3600;

/** A child that ran to its end, and whether its identity reached the row. */
interface SupervisedRun {
  result: RunResult;
  /** Where the child's pid/start/command write ended, and the store's error if it failed. */
  recorded: { written: WriteResult; error: string };
  /** The last activity time written to the row (0 if none). */
  lastActivity: number;
  startedAt: number;
}

/**
 * Runs one claimed job (status already `running`) to its end and records the outcome:
 * prepare the launch, supervise the child, record the end. Never throws: every failure
 * ends up in the row (or in persist_error if the row cannot be written). `signal` carries
 * the JobStopCause when the engine stops it.
 */
export async function runJob(row: JobRow, ctx: RunnerContext, signal: AbortSignal): Promise<void> {
  const jobDir = join(ctx.jobsDir, row.id);
  try {
    await runAndRecord(row, ctx, signal, jobDir);
  } finally {
    scrubJobDir(row.id, jobDir);
  }
}

async function runAndRecord(row: JobRow, ctx: RunnerContext, signal: AbortSignal, jobDir: string): Promise<void> {
  const rw = new JobRowWriter(row.id, ctx, { jobDir, startedAt: row.started_at });
  const spec = await prepareLaunch(row, ctx, jobDir, rw);
  if (!spec) return;
  if (signal.aborted) {
    await afterRun(row, spec); // nothing ran, but the launch may have prepared files to put back
    return rw.finish(stoppedPatch(signal.reason as JobStopCause, ctx.now()));
  }
  let run: SupervisedRun;
  try {
    run = await superviseChild(row, spec, ctx, signal, rw);
  } catch (e) {
    await afterRun(row, spec);
    // A spawn refused for a reason of its own (as root without bwrap: jail_unavailable).
    const kind = isDlError(e, "jail_unavailable") ? "jail_unavailable" : "infra";
    return rw.fail(kind, describeError(e));
  }
  await recordEnd(row, run, { ctx, signal, rw, jobDir, after: await afterRun(row, spec) });
}

async function afterRun(row: JobRow, spec: LaunchSpec): Promise<RunCheck> {
  try {
    return (await spec.afterRun?.()) ?? { failure: null };
  } catch (e) {
    log.error(`job ${row.id}: the check after the run failed: ${describeError(e)}`);
    return { failure: { failureKind: "infra", message: `the check after the run failed: ${describeError(e)}` } };
  }
}

/** The job's private dir and the provider's argv/env/cwd; a failure ends the job `infra`. */
async function prepareLaunch(
  row: JobRow,
  ctx: RunnerContext,
  jobDir: string,
  rw: JobRowWriter,
): Promise<LaunchSpec | null> {
  try {
    privateDir(jobDir, dirname(ctx.jobsDir));
    reserveOutcome(jobDir);
    return await ctx.provider.launch(row, { jobDir });
  } catch (e) {
    // A refusal the provider explains itself (jail unavailable, unsafe git config).
    const kind = isDlError(e) ? (e.data.failure_kind ?? null) : null;
    await rw.fail(kind ?? "infra", kind ? describeError(e) : `could not prepare the run: ${describeError(e)}`);
    return null;
  }
}

/**
 * Spawns the child in its own group and waits for the group to end, with the job's
 * watchdog and the engine's stop signal (process-run does the terminate and the drain).
 * Its identity is written to the row at once, and only then does its command run (it
 * waits at its start gate until then); if that write does not land the command never
 * runs: "gone" means the row was cancelled or reaped between claim and spawn, and
 * "error" means nobody could stop this child if we died.
 */
async function superviseChild(
  row: JobRow,
  spec: LaunchSpec,
  ctx: RunnerContext,
  signal: AbortSignal,
  rw: JobRowWriter,
): Promise<SupervisedRun> {
  const stopper = new AbortController();
  const onAbort = () => stopper.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const recording = Promise.withResolvers<SupervisedRun["recorded"]>();
  let lastActivity = 0;
  const startedAt = row.started_at ?? ctx.now();
  const budgetMs = (row.timeout_s ?? DEFAULT_BUDGET_S) * 1000 - (ctx.now() - startedAt);
  try {
    const result = await runGroup({
      argv: spec.argv,
      env: spec.env,
      cwd: spec.cwd,
      jailNet: spec.jailNet ?? undefined,
      jailMarked: spec.jailMarked,
      // Not jailed and not dl: as root, no /proc reach to dl or anyone else.
      ownPidNamespace: !spec.jailMarked && !spec.selfChild,
      stdinFile: spec.stdinFile,
      stdoutCap: ctx.outputCap,
      stderrCap: ctx.outputCap,
      timeoutMs: Math.max(0, budgetMs),
      graceMs: ctx.graceMs,
      signal: stopper.signal,
      onOutput: () => {
        const t = ctx.now();
        if (t - lastActivity < ACTIVITY_WRITE_MS) return;
        lastActivity = t;
        rw.write({ last_activity_at: t });
      },
      // The child waits at its start gate until its row names it (sys/start-gate.ts).
      gated: true,
      onSpawn: (child) =>
        recordChild(child, ctx, rw).then((r) => {
          if (r.written !== "changed") stopper.abort();
          recording.resolve(r);
          return r.written === "changed";
        }),
      onStopError: (e) => log.warn(`job ${row.id}: stopping its group failed: ${describeError(e)}`),
    });
    return { result, recorded: await recording.promise, lastActivity, startedAt };
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Writes who the child is, so a later server can verify and stop it if this one dies. */
async function recordChild(
  child: { pid: number; pgid: number },
  ctx: RunnerContext,
  rw: JobRowWriter,
): Promise<SupervisedRun["recorded"]> {
  const ident = ctx.identities.read(child.pid);
  const written = await rw.persist({
    child_pid: child.pid,
    child_pgid: child.pgid,
    child_start: ident?.startTime ?? null,
    child_cmd: ident?.command ?? null,
    last_activity_at: ctx.now(),
  });
  return { written, error: rw.lastError };
}

/**
 * Writes how the run ended: unrecorded, failed by the check after it (`after`: the
 * jail's git files; whatever the run did, that is the outcome), stopped, or the outcome
 * chooseOutcome picks.
 */
/**
 * How a run writes its end. What the check after the run measured (files changed, kept
 * read-only) rides on every end; and what the child left is checked first, so a row that
 * reads ended already has a folder with no key in it (a reader may look the moment it ends).
 */
function endWriter(row: JobRow, o: { rw: JobRowWriter; jobDir: string; after: RunCheck }) {
  const changes = o.after.changes ? JSON.stringify(o.after.changes) : null;
  return {
    finish: (p: JobPatch, why?: string) => {
      scrubJobDir(row.id, o.jobDir);
      return o.rw.finish({ ...p, changes }, why);
    },
  };
}

async function recordEnd(
  row: JobRow,
  run: SupervisedRun,
  o: {
    ctx: RunnerContext;
    signal: AbortSignal;
    rw: JobRowWriter;
    jobDir: string;
    after: RunCheck;
  },
): Promise<void> {
  const { ctx } = o;
  const rw = endWriter(row, o);
  const { result, recorded } = run;
  const out: RunOutput = {
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: result.stdout.text(),
    stderr: result.stderr.text(),
    outputTruncated: result.stdout.truncated || result.stderr.truncated,
    durationMs: ctx.now() - run.startedAt,
    jobDir: o.jobDir,
  };
  const ended = ctx.now();
  keepOutputTail(o.jobDir, out);
  if (recorded.written === "gone") return;
  if (recorded.written === "error") {
    const why = `could not record the child process (${recorded.error}); it was stopped`;
    return rw.finish({ exit_code: out.exitCode, ended_at: ended }, why);
  }
  // The jail never started its command (known out of band, never from the output).
  if (result.jailSetupFailure && !o.signal.aborted) {
    const { message } = jailFailureMessage(result.jailSetupFailure, "the job");
    return rw.finish({ status: "failed", failure_kind: "jail_unavailable", final_response: message, ended_at: ended });
  }
  const parsed = await parseRun(row, out, ctx);
  // However it ended, what ran was spent: the usage its output reports, else what its files say.
  parsed.usage ??= spentOf(row, o.jobDir, ctx);
  const usage = parsed.usage ? JSON.stringify(parsed.usage) : null;
  if (o.after.failure) {
    const { failureKind, message } = o.after.failure;
    return rw.finish({ status: "failed", failure_kind: failureKind, final_response: message, ended_at: ended, usage });
  }
  if (o.signal.aborted)
    return rw.finish({ ...stoppedPatch(o.signal.reason as JobStopCause, ended, out.exitCode), usage });
  const outcome = chooseOutcome({
    timedOut: result.timedOut,
    exitCode: out.exitCode,
    outputFailure: parsed.failure,
    classify: () => ctx.provider.classify(out, row),
    retryCount: row.retry_count,
    maxRetries: ctx.maxRetries,
  });
  await rw.finish({
    ...resultFields(row, out, parsed, ctx, run.lastActivity),
    ...outcomePatch(outcome, ended, ctx.retryDelayMs),
  });
}

/** The provider's account of what a run spent from its files; a reader that throws gives none. */
function spentOf(row: JobRow, jobDir: string, ctx: RunnerContext): Record<string, unknown> | null {
  try {
    return ctx.provider.spent?.(row, jobDir) ?? null;
  } catch (e) {
    log.warn(`job ${row.id}: could not read what its run spent: ${describeError(e)}`);
    return null;
  }
}

/** What the provider read out of the run (the row's and the outcome file's writers redact it); a parser that throws leaves a warning, not a crash. */
async function parseRun(row: JobRow, out: RunOutput, ctx: RunnerContext): Promise<ParsedResult> {
  try {
    return await ctx.provider.parse(out, row);
  } catch (e) {
    return { finalResponse: null, warnings: [`could not read the result: ${describeError(e)}`] };
  }
}

/** What the provider read out of the run, plus the warnings gathered since submit. */
function resultFields(
  row: JobRow,
  out: RunOutput,
  parsed: ParsedResult,
  ctx: RunnerContext,
  lastActivity: number,
): JobPatch {
  const warnings = [...(row.warnings ? (JSON.parse(row.warnings) as string[]) : []), ...(parsed.warnings ?? [])];
  if (out.outputTruncated) warnings.push(`output over ${ctx.outputCap} bytes was cut`);
  return {
    exit_code: out.exitCode,
    final_response: parsed.finalResponse,
    usage: parsed.usage ? JSON.stringify(parsed.usage) : null,
    session_id: parsed.sessionId ?? null,
    warnings: warnings.length ? JSON.stringify(warnings) : null,
    last_activity_at: lastActivity || null,
  };
}
