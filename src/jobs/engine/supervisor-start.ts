import { join } from "node:path";
import type { JobStore } from "../../store/jobs.ts";
import type { JobRow } from "../../store/types.ts";
import { spawnDetached } from "../../sys/detached.ts";
import { jobDirOf } from "../../sys/paths.ts";
import { privateDir } from "../../sys/private-file.ts";
import type { Identities } from "./machine.ts";
import type { SupervisorCommand, SupervisorStarter } from "./options.ts";
import type { Provider } from "./provider.ts";

/**
 * `dl supervise <provider> <id> --from <server>`, in a session of its own, its output in
 * the job's folder (supervisor.log), handed what only this server holds for the job.
 */
export function supervisorStarter(
  cmd: SupervisorCommand,
  provider: Pick<Provider, "name" | "handOffEnv">,
  stateDir: string,
): SupervisorStarter {
  return (row, from) => {
    const jobDir = jobDirOf(stateDir, row.id);
    privateDir(jobDir, stateDir);
    return spawnDetached({
      argv: [...cmd.self, "supervise", provider.name, row.id, "--from", from],
      env: { ...cmd.env, ...provider.handOffEnv?.(row) },
      cwd: cmd.cwd,
      logFile: join(jobDir, "supervisor.log"),
    });
  };
}

/**
 * Hands queued job `row` of server `from` to a new supervisor, which adopts it (store
 * `adopt`) and waits in the queue for it. The row names the supervisor as its owner at
 * once: if whoever handed it over dies before the adoption, no reaper takes a job whose
 * supervisor is alive for an orphan. Throws when the supervisor cannot be started.
 */
export function handOver(
  store: JobStore,
  row: JobRow,
  from: string,
  start: SupervisorStarter,
  identities: Identities,
): ReturnType<SupervisorStarter> {
  const child = start(row, from);
  const ident = identities.read(child.pid);
  if (ident) store.setOwnerIfFrom(row.id, from, { owner_pid: child.pid, owner_start: ident.startTime });
  return child;
}
