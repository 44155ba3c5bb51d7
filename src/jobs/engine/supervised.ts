import { log } from "../../log.ts";
import { isTerminal, type JobRow } from "../../store/types.ts";
import type { Launcher } from "./launch.ts";
import { ownerAlive } from "./liveness.ts";
import type { EngineContext } from "./options.ts";

/**
 * A supervisor's one job (`dl supervise`). The server that queued the job handed it
 * over: the supervisor adopts the row (it becomes its owner, so the job lives as long as
 * the supervisor does, not the server), and the engine of this process runs it as its
 * only row, through the same admission, locks, stagger, runner and cancel requests as
 * ever. `finished` resolves once the row has ended (or was never ours to adopt). With
 * DELEGATE_JOBS_DIE_WITH_SERVER, the job is stopped once the window it came from is gone.
 */
export class Supervised {
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly done = Promise.withResolvers<void>();
  private stopping = false;

  private constructor(
    private readonly c: EngineContext,
    private readonly launcher: Launcher,
    readonly jobId: string,
  ) {}

  get finished(): Promise<void> {
    return this.done.promise;
  }

  /** Takes job `jobId` over from server `from`; a row that is not queued there any more is left alone. */
  static adopt(c: EngineContext, launcher: Launcher, job: { jobId: string; from: string }): Supervised {
    const s = new Supervised(c, launcher, job.jobId);
    const self = c.options.self;
    const owner = { server_id: c.serverId, owner_pid: self.pid, owner_start: self.startTime };
    if (!c.store.adopt(job.jobId, job.from, owner)) {
      log.debug(
        `${c.options.provider.name} job ${job.jobId}: not queued under ${job.from} any more; nothing to supervise`,
      );
      s.done.resolve();
      return s;
    }
    s.timer = setInterval(() => s.look(), c.options.tickMs ?? 250);
    // Before admission's first pass: a job whose window is gone and that dies with it
    // (a killed server's queued job, DELEGATE_JOBS_DIE_WITH_SERVER) never starts.
    s.look();
    return s;
  }

  /** Called when the launcher says the job ended, and on every tick. */
  look(): void {
    const row = this.c.store.get(this.jobId);
    if (!row || (isTerminal(row.status) && !this.launcher.runs(this.jobId))) {
      this.finish();
      return;
    }
    if (this.c.options.dieWithOrigin && !this.stopping && !originAlive(row, this.c)) void this.stopWithOrigin(row);
  }

  private finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.done.resolve();
  }

  /** The reference's way: the window it came from is gone, so the job ends, recorded server_stopped. */
  private async stopWithOrigin(row: JobRow): Promise<void> {
    this.stopping = true;
    log.info(
      `${this.c.options.provider.name} job ${row.id}: its server is gone; stopping it (DELEGATE_JOBS_DIE_WITH_SERVER)`,
    );
    const ended = { status: "cancelled" as const, failure_kind: "server_stopped" as const, ended_at: this.c.now() };
    if (row.status === "queued" && this.c.store.update(row.id, { ...ended, queue_reason: null }, ["queued"])) return;
    await this.launcher.stop(row.id, "shutdown");
  }
}

/** Whether the server that took the job's call (its window) still runs. */
function originAlive(row: JobRow, c: Pick<EngineContext, "options">): boolean {
  if (row.origin_pid === null) return true; // a row from before origins were kept
  return ownerAlive({ owner_pid: row.origin_pid, owner_start: row.origin_start }, c.options.identities);
}
