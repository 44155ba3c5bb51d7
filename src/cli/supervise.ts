import { defineCommand } from "citty";
import { DlError } from "../errors.ts";
import { PROVIDER_MODULES } from "../jobs/providers/index.ts";
import { log } from "../log.ts";
import { PROVIDERS } from "../providers.ts";
import { defaultDeps } from "../services.ts";
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
    const svc = await defaultDeps(config, VERSION, undefined, role).jobService(module);
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

export const superviseCommand: DlCommand = {
  def,
  ownSignals: true,
  examples: ["dl supervise codex cx-3f9a2b1c4d --from srv-1a2b3c4d"],
};
