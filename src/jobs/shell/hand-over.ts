import { statSync } from "node:fs";
import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import { factsOf } from "../../providers.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { JobRow } from "../../store/types.ts";
import type { JobStateDir } from "../../sys/paths.ts";
import type { Identities } from "../engine/machine.ts";
import { handOver, supervisorStarter } from "../engine/supervisor-start.ts";

/** Hands one dead server's queued job to a supervisor; true when one was started. */
export type OrphanHandOver = (store: JobStore, source: JobStateDir, row: JobRow) => boolean;

/** How a shell command starts dl as a supervisor: this binary and this process's settings. */
export interface ShellSupervisorCommand {
  self: readonly string[];
  /** Config.supervisorEnv: the environment that rebuilds this command's Config. */
  env: Readonly<Record<string, string>>;
}

const isDirectory = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * A shell command's way (dl wait, dl reap) of keeping a killed window's queued job: the
 * same binary started as its supervisor, as a live server's reaper would, so the job
 * runs although no server of its store is left. The supervisor is told the store it is
 * in (its provider's state-dir variable), since a store found through the registry may
 * be one this shell's settings do not name, and runs in the job's workdir (the shell's
 * folder may be gone before the job ends). What the dead server alone held for the job
 * (a delegate_to_provider endpoint's key) is lost: that job fails provider_key_lost.
 */
export function orphanHandOver(cmd: ShellSupervisorCommand, identities: Identities): OrphanHandOver {
  return (store, source, row) => {
    const facts = factsOf(source.provider);
    if (row.status !== "queued" || row.server_id === null || !facts) return false;
    const env = { ...cmd.env, [facts.stateEnv]: source.stateDir };
    const cwd = isDirectory(row.workdir) ? row.workdir : process.cwd();
    const start = supervisorStarter({ self: cmd.self, env, cwd }, { name: facts.name }, source.stateDir);
    try {
      handOver(store, row, row.server_id, start, identities);
      return true;
    } catch (e) {
      log.warn(`${facts.name} job ${row.id}: could not start a supervisor for it: ${describeError(e)}`);
      return false;
    }
  };
}
