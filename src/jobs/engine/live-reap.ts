import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import type { JobRow } from "../../store/types.ts";
import { ownerAlive } from "./liveness.ts";
import type { EngineContext } from "./options.ts";
import { type ReapAction, reapDeadOwners } from "./reaper.ts";

/** Floor between two reaps while our jobs wait on caps (a reap that cannot end a row must not spin). */
const REAP_BLOCKED_MS = 250;

/** One log line per row ended, so a restart or a live reap leaves a trace. */
export function logReaped(provider: string, actions: readonly ReapAction[]): void {
  for (const a of actions) log.info(`${provider} job ${a.id}: ${a.status} (${a.reason})`);
}

/**
 * Ends dead servers' rows while this server runs, not only at start. A dead server's
 * running rows still hold caps in every server's admission plan (its orphan child may
 * still run), and its queued rows count toward the queue bound, so leaving them until
 * the next restart would stall live jobs. Admission reports what it saw each pass;
 * this decides when a reap is due and makes sure only one runs at a time.
 */
export class LiveReaper {
  /** A dead owner's row was seen by the last admission pass; `blocked`: one of ours waits on a cap. */
  private dead: { blocked: boolean } | null = null;
  private lastReap = 0;
  private reaping: Promise<void> | null = null;

  /** `adoptQueued`: hands a dead server's queued job to a supervisor (Launcher.handOffOrphan). */
  constructor(
    private readonly c: EngineContext,
    private readonly adoptQueued?: (row: JobRow) => boolean,
  ) {}

  /** Ends rows of dead servers now (what `dl reap` does from outside). */
  reap(dryRun = false): Promise<ReapAction[]> {
    const { options, store, now, serverId } = this.c;
    return reapDeadOwners(store, {
      identities: options.identities,
      now,
      selfServerId: serverId,
      dryRun,
      graceMs: options.graceMs,
      spent: (row, jobDir) => options.provider.spent?.(row, jobDir) ?? null,
      // With DELEGATE_JOBS_DIE_WITH_SERVER the supervisor ends it at once, server_stopped.
      adoptQueued: this.adoptQueued,
    });
  }

  /** What the last admission pass saw: null when every active row's owner is alive. */
  observe(dead: { blocked: boolean } | null): void {
    this.dead = dead;
  }

  /** Whether the last pass saw a dead owner's row and the throttle lets us reap now. */
  due(): boolean {
    if (!this.dead) return false;
    const gap = this.dead.blocked ? REAP_BLOCKED_MS : (this.c.options.reapEveryMs ?? 5000);
    return this.c.now() - this.lastReap >= gap;
  }

  /** How soon admission should wake for the next reap: only while one of ours waits on a cap. */
  wakeInMs(): number {
    if (!this.dead?.blocked) return Infinity;
    return Math.max(0, this.lastReap + REAP_BLOCKED_MS - this.c.now());
  }

  /** Whether any active row belongs to a dead server (checked before the queue bound). */
  hasDeadRows(): boolean {
    const { options, store, serverId } = this.c;
    return store.listActive().some((r) => r.server_id !== serverId && !ownerAlive(r, options.identities));
  }

  /** The reap in flight, or null: stop waits for it before it closes the store. */
  get inFlight(): Promise<void> | null {
    return this.reaping;
  }

  /**
   * Ends dead servers' rows (verified orphans killed → killed_on_restart, the rest lost),
   * as JobEngine.start and `dl reap` do. One reap at a time; callers share it.
   */
  reapDead(): Promise<void> {
    this.reaping ??= (async () => {
      try {
        logReaped(this.c.options.provider.name, await this.reap());
      } catch (e) {
        log.warn(`${this.c.options.provider.name}: ending dead servers' jobs failed: ${describeError(e)}`);
      } finally {
        this.lastReap = this.c.now();
        this.dead = null;
        this.reaping = null;
      }
    })();
    return this.reaping;
  }
}
