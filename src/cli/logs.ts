import { defineCommand } from "citty";
import { readTranscript, renderTranscriptLine, type TranscriptLine } from "../agent/transcript.ts";
import type { Config } from "../config.ts";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { readOutputTail } from "../jobs/engine/output-tail.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { findJob } from "../jobs/shell/job-finder.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { isTerminal } from "../store/types.ts";
import { jobDirOf } from "../sys/paths.ts";
import { sanitizeMultiline } from "../sys/sanitize.ts";
import { isDelegationId, logIdProblem } from "../usage/job-id.ts";
import { findDelegationTranscript, jobTranscriptFile } from "../usage/transcript-path.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { jobFromArg } from "./job-arg.ts";

/** How often --follow looks for new steps. */
const FOLLOW_MS = 250;

type Out = { json: boolean; write: (s: string) => void };

function printLines(lines: readonly TranscriptLine[], o: Out): void {
  for (const l of lines) o.write(o.json ? JSON.stringify(l) : renderTranscriptLine(l));
}

/** A delegation has no job row: its transcript is the whole record. */
function delegationLogs(config: Config, id: string, o: Out): void {
  const file = findDelegationTranscript(knownJobStores(config.paths, true), id);
  const t = file ? readTranscript(file, 0, { refuseForeign: true }) : null;
  if (!t) {
    process.stderr.write(
      `dl logs: no transcript for delegation ${id} (pruned by dl reap, or from another machine); dl jobs --kind delegation lists the ones on this machine\n`,
    );
    process.exitCode = EXIT.usage;
    return;
  }
  printLines(t.lines, o);
}

/**
 * Said once on stderr when --follow starts on a live job, so a first turn that takes
 * minutes (or a CLI job, whose output is read when it ends) is not silence to guess at.
 */
function followingNote(id: string, state: string, provider: string): void {
  const facts = PROVIDER_MODULES.find((m) => m.facts.name === provider)?.facts;
  const what = facts?.stepsWhileRunning
    ? "each step prints as it ends"
    : "its output prints when it ends (dl show has its state)";
  process.stderr.write(`dl logs: ${id} is ${state}; following it until it ends: ${what}; Ctrl-C stops\n`);
}

/** What a job did: its transcript, else the tail of what its CLI printed, else its answer. */
async function jobLogs(config: Config, id: string, follow: boolean, o: Out): Promise<void> {
  let job = jobFromArg("logs", config, id);
  if (!job) return;
  const file = jobTranscriptFile(job.store.stateDir, id);
  const followed = follow && !isTerminal(job.row.status) && !job.verdict.orphaned;
  if (followed) followingNote(id, job.verdict.state, job.row.provider);
  let from = 0;
  for (;;) {
    const t = readTranscript(file, from, { refuseForeign: true });
    if (t) {
      printLines(t.lines, o);
      from = t.next;
    }
    if (!follow || isTerminal(job.row.status) || job.verdict.orphaned) break;
    await Bun.sleep(FOLLOW_MS);
    job = findJob(knownJobStores(config.paths), id, sysIdentities).job ?? job;
  }
  // How the followed job ended (done, cancelled, failed…): its steps alone do not say.
  if (followed) process.stderr.write(`dl logs: ${id} ended ${job.verdict.state}\n`);
  if (from > 0) return;
  const kept = readOutputTail(jobDirOf(job.store.stateDir, id));
  // A tail dl will not read (another user's file, a link planted there) is named, not passed over.
  if (kept && "problem" in kept) process.stderr.write(`dl logs: ${id}: ${kept.problem}\n`);
  const tail = kept && "text" in kept ? kept.text : null;
  if (tail) {
    // A CLI whose output is an event stream (Codex's) shows it as steps, like an agent job's.
    const module = PROVIDER_MODULES.find((m) => m.facts.name === job.row.provider);
    const steps = !o.json ? (module?.outputSteps?.(tail) ?? null) : null;
    o.write(o.json ? JSON.stringify({ t: "output", text: tail }) : steps ? steps.join("\n") : tail.trimEnd());
    return;
  }
  const answer = job.row.final_response ? sanitizeMultiline(job.row.final_response, 8000) : null;
  o.write(
    o.json
      ? JSON.stringify({ t: "none", state: job.verdict.state, final_response: answer })
      : `${id}: no steps recorded yet (${job.verdict.state})${answer ? `; its answer:\n${answer}` : ""}`,
  );
}

const def = defineCommand({
  meta: {
    name: "logs",
    description: "What a job or delegation did, step by step: model turns and tool calls (exit 2 unknown id)",
  },
  args: {
    id: {
      type: "positional",
      required: true,
      description: "A job id (cx-…, gm-…, dsh-…, ag-…) or a delegation id (dg-…)",
    },
    follow: { type: "boolean", alias: "f", default: false, description: "Keep printing new steps until the job ends" },
    json: { type: "boolean", default: false, description: "One JSON object per step" },
  },
  async run({ args }) {
    const config = configOrExit();
    const id = String(args.id);
    const bad = logIdProblem(id);
    if (bad) {
      process.stderr.write(`dl logs: ${bad}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    const out: Out = { json: args.json, write: (s) => process.stdout.write(`${s}\n`) };
    if (isDelegationId(id)) delegationLogs(config, id, out);
    else await jobLogs(config, id, args.follow, out);
  },
});

export const logsCommand: DlCommand = {
  def,
  examples: ["dl logs ag-0a1b2c3d4e", "dl logs dg-5e6f7a8b9c --json", "dl logs cx-3f9a2b1c4d --follow"],
};
