import { randomBytes } from "node:crypto";
import { defineCommand } from "citty";
import { DlError, describeError, isDlError } from "../errors.ts";
import { selfOwner } from "../jobs/engine/machine.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { log } from "../log.ts";
import { PROVIDERS } from "../providers.ts";
import { defaultDeps, stateDirOf } from "../services.ts";
import { JobStore } from "../store/jobs.ts";
import { hardenProcess } from "../sys/hardening.ts";
import { terminateAllGroups } from "../sys/process.ts";
import { selfArgv } from "../sys/self-command.ts";
import { jobIdProblem } from "../usage/job-id.ts";
import { VERSION } from "../version.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";

/**
 * `dl supervise <provider> <id> --from <server>`: the supervisor of one job, started by
 * the `dl serve` that queued it, in a session of its own. It adopts the job, runs it
 * through the provider's engine (the same admission, slot locks, stagger, runner,
 * watchdog, cancel requests and store writes as ever) and exits when the job has ended,
 * so the job lives as long as this process, not as long as the window's server.
 */
const def = defineCommand({
  meta: {
    name: "supervise",
    description: "Run one job to its end (dl serve starts this for each job; not for people)",
  },
  args: {
    provider: {
      type: "positional",
      required: true,
      description: `the job's provider (${PROVIDERS.map((p) => p.name).join(", ")})`,
    },
    id: { type: "positional", required: true, description: "the job id" },
    from: { type: "string", valueHint: "SERVER", required: true, description: "the id of the server that queued it" },
  },
  async run({ args }) {
    hardenProcess();
    const config = configOrExit();
    const module = PROVIDER_MODULES.find((m) => m.facts.name === args.provider);
    if (!module)
      throw new DlError("bad_input", `unknown provider ${JSON.stringify(String(args.provider).slice(0, 40))}`);
    const provider = module.facts;
    const bad = jobIdProblem(args.id);
    if (bad || !args.id.startsWith(provider.idPrefix))
      throw new DlError("bad_input", bad ?? `${args.id} is not a ${provider.name} job`);
    const adopt = { jobId: args.id, from: args.from };
    // It hands on, too: a dead server's queued jobs its reaper finds get supervisors of their own.
    const supervisorCommand = { self: selfArgv(), env: config.supervisorEnv, cwd: process.cwd() };
    const role = { adopt, dieWithOrigin: config.jobs.dieWithServer, supervisorCommand };
    const deps = defaultDeps(config, VERSION, undefined, role);
    const svc = await deps.jobService(module).catch((e: unknown) => {
      // Left queued, the job would be handed to one failing supervisor after another.
      refuseJob(stateDirOf(config, module), adopt, e);
      process.exit(EXIT.failure);
    });
    // A signal to the supervisor (a person ending it) ends its job as a server's stop would.
    // Its groups and its jails' pids cgroups go with it (terminateAllGroups removes both).
    const leave = () => terminateAllGroups(2_000, 1_000);
    const stop = () =>
      void svc
        .stop()
        .then(leave)
        .finally(() => process.exit(EXIT.ok));
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, stop);
    await svc.engine.finished;
    log.debug(`dl supervise: job ${args.id} has ended`);
    await svc.stop();
    await leave();
    process.exit(EXIT.ok);
  },
});

/**
 * This process was handed a job it cannot run (its settings refuse the provider, or the
 * service would not start: a shell's dl wait may lack what the window's registration
 * set). It takes the job over as it would to run it, so only one supervisor ends it, and
 * records it failed with the reason; a job already taken by another is left alone.
 */
function refuseJob(stateDir: string, job: { jobId: string; from: string }, e: unknown): void {
  const kind = isDlError(e) ? (e.data.failure_kind ?? e.code) : "infra";
  const me = selfOwner();
  const self = { server_id: `srv-${randomBytes(4).toString("hex")}`, owner_pid: me.pid, owner_start: me.startTime };
  const why = `the dl that took this job over from its closed window could not run it: ${describeError(e)}; fix that (dl status shows the settings), then submit it again`;
  log.error(`dl supervise: job ${job.jobId}: ${why}`);
  const store = JobStore.open(stateDir);
  try {
    if (!store.adopt(job.jobId, job.from, self)) return;
    const ended = { status: "failed" as const, failure_kind: kind, final_response: why, ended_at: Date.now() };
    store.update(job.jobId, { ...ended, queue_reason: null }, ["queued"]);
  } finally {
    store.close();
  }
}

export const superviseCommand: DlCommand = {
  def,
  ownSignals: true,
  examples: ["dl supervise codex cx-3f9a2b1c4d --from srv-1a2b3c4d"],
};
