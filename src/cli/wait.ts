import { defineCommand } from "citty";
import { sysIdentities } from "../jobs/engine/machine.ts";
import { orphanHandOver } from "../jobs/shell/hand-over.ts";
import { knownJobStores } from "../jobs/shell/store-registry.ts";
import { describeUnusable, waitForJobs } from "../jobs/shell/wait.ts";
import { selfArgv } from "../sys/self-command.ts";
import { jobIdProblem } from "../usage/job-id.ts";
import type { DlCommand } from "./command.ts";
import { configOrExit } from "./config-or-exit.ts";
import { EXIT } from "./exit.ts";
import { interruptScope } from "./interrupt.ts";
import { refuseIrregularStores } from "./stores-or-exit.ts";

const def = defineCommand({
  meta: {
    name: "wait",
    description:
      "Wait for jobs to end, one line each (exit 0 done, 1 failed, 2 unknown id or unreadable job store, 3 timeout)",
  },
  args: {
    ids: {
      type: "positional",
      required: false,
      description: "Job ids (cx-…, gm-…, dsh-…, ag-…); none = every job queued or running now",
    },
    all: { type: "boolean", default: false, description: "Print nothing until every job has ended" },
    timeout: { type: "string", valueHint: "SECONDS", description: "Give up after this many seconds (exit 3)" },
    json: { type: "boolean", default: false, description: "One JSON object per line" },
  },
  async run({ args }) {
    const config = configOrExit();
    let timeoutMs: number | undefined;
    if (args.timeout !== undefined) {
      const s = Number(args.timeout);
      if (!Number.isFinite(s) || s <= 0) {
        process.stderr.write(
          `dl wait: --timeout must be a number of seconds > 0, got ${JSON.stringify(String(args.timeout).slice(0, 40))}; e.g. dl wait --all --timeout 600\n`,
        );
        process.exitCode = EXIT.usage;
        return;
      }
      timeoutMs = s * 1000;
    }
    const ids = (args._ as string[]).filter((x) => x.length > 0);
    // A typo would otherwise look like a job not recorded yet for 30 s (or a running one).
    const bad = ids.map(jobIdProblem).find((p) => p !== null);
    if (bad) {
      process.stderr.write(`dl wait: ${bad}; dl jobs lists the ids on this machine\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    const sources = knownJobStores(config.paths);
    if (refuseIrregularStores("wait", sources)) return;
    using interrupt = interruptScope();
    let written = 0;
    const r = await waitForJobs({
      ids,
      all: args.all,
      json: args.json,
      timeoutMs,
      intervalMs: config.watcher.intervalS * 1000,
      sources,
      identities: sysIdentities,
      // A waited-for job of a killed window that never started runs on, supervised by this binary.
      handOver: orphanHandOver({ self: selfArgv(), env: config.supervisorEnv }, sysIdentities),
      signal: interrupt.signal,
      blocking: interrupt.blocking,
      write: (line) => {
        written++;
        process.stdout.write(`${line}\n`);
      },
    });
    // Waiting for "every job" when there is none is not silence: say so, and where to look.
    if (ids.length === 0 && written === 0 && r.code === 0)
      process.stderr.write(
        "dl wait: nothing to wait for: no job is queued or running on this machine (dl jobs lists the ended ones)\n",
      );
    if (r.unusable.length) process.stderr.write(`dl wait: ${describeUnusable(r.unusable)}\n`);
    if (r.code === 3 && r.pending.length) {
      process.stderr.write(
        `dl wait: stopped waiting with ${r.pending.length} job(s) not ended: ${r.pending.slice(0, 20).join(" ")}; run dl wait ${r.pending.slice(0, 20).join(" ")} to wait on\n`,
      );
    }
    process.exitCode = r.code;
  },
});

export const waitCommand: DlCommand = {
  def,
  variadic: true,
  examples: [
    "dl wait cx-3f9a2b1c4d gm-0a1b2c3d4e",
    "dl wait --all --timeout 3600",
    "dl wait --json",
    "delegate-wait cx-3f9a2b1c4d   # the same, through a link named delegate-wait (ln -s dl delegate-wait)",
  ],
};
