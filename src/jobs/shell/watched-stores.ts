import { DlError } from "../../errors.ts";
import { storeAccess } from "../../store/access.ts";
import { explainStorageCause, storageCause } from "../../store/db.ts";
import { JobStore } from "../../store/jobs.ts";
import type { JobRow } from "../../store/types.ts";
import type { JobStateDir } from "../../sys/paths.ts";

/** A store that exists (or should) but cannot be read: the wait cannot see its jobs. */
export interface UnusableStore {
  provider: string;
  stateDir: string;
  reason: string;
}

/** A passing lock (a server migrating or checkpointing): the next look will do. */
const transient = (cause: string) => cause.startsWith("SQLITE_BUSY") || cause.startsWith("SQLITE_LOCKED");

/** Why a store cannot be used, from its cause code: explained when known. */
function reasonFor(cause: string): string {
  const explained = explainStorageCause(cause);
  return explained ? `${explained} (${cause})` : `it cannot be read (${cause})`;
}

/**
 * The job stores `dl wait` watches, read-only: opened as they appear, and asked cheaply
 * (PRAGMA data_version) whether anything was committed since the last look. A store that
 * is there but cannot be read (a state dir under a file, a corrupt or unreadable file) is
 * reported, so the wait can say so at once instead of calling its jobs missing.
 */
export class WatchedStores {
  private readonly stores = new Map<string, JobStore>();
  private readonly versions = new Map<string, number>();
  private readonly broken = new Map<string, UnusableStore>();
  /** The state dir each row read by rows() came from. */
  private readonly homes = new Map<string, string>();

  constructor(private readonly sources: readonly JobStateDir[]) {
    this.open();
  }

  /** Opens the stores that exist now and were not open yet; notes the ones that cannot be. */
  private open(): void {
    for (const s of this.sources) {
      if (this.stores.has(s.stateDir)) continue;
      const why = this.tryOpen(s);
      if (why === null || transient(why)) this.broken.delete(s.stateDir);
      else
        this.broken.set(s.stateDir, {
          provider: s.provider,
          stateDir: s.stateDir,
          reason: why.startsWith("SQLITE_") || /^E[A-Z]+$/.test(why) ? reasonFor(why) : why,
        });
    }
  }

  /** Opens one store if its file exists: null when opened or not created yet, else the cause code or why not. */
  private tryOpen(s: JobStateDir): string | null {
    const access = storeAccess(s.stateDir);
    if (access.state === "absent") return null;
    if (access.state === "unreadable") return access.reason;
    try {
      this.stores.set(s.stateDir, JobStore.open(s.stateDir, { provider: s.provider }));
      return null;
    } catch (e) {
      // A store this user may read but not write is still worth watching.
      let ro: JobStore | undefined;
      try {
        ro = JobStore.open(s.stateDir, { readonly: true, provider: s.provider });
        ro.getMeta("opened"); // a read proves it is a database: opening alone reads nothing
        this.stores.set(s.stateDir, ro);
        return null;
      } catch {
        ro?.close();
        // Another user's store is named with what to do (sys/owned.ts), not by its cause code.
        return e instanceof DlError && e.data.cause === "not_owned" ? e.message : storageCause(e);
      }
    }
  }

  /** Stores that exist but cannot be read right now. */
  unusable(): UnusableStore[] {
    return [...this.broken.values()];
  }

  /** True when a store appeared or any store committed since the last call (or cannot tell). */
  changed(): boolean {
    const known = this.stores.size;
    this.open();
    let changed = this.stores.size > known;
    for (const [dir, st] of this.stores) {
      try {
        const v = st.dataVersion();
        if (this.versions.get(dir) !== v) {
          this.versions.set(dir, v);
          changed = true;
        }
      } catch {
        changed = true;
      }
    }
    return changed;
  }

  /** Ids of every job queued or running now, across the stores. */
  activeIds(): string[] {
    return [...this.stores.values()].flatMap((st) => {
      try {
        return st.listActive().map((r) => r.id);
      } catch {
        return []; // rows() notes the store as unusable on the next pass
      }
    });
  }

  /** The rows of `ids` found in any store; `complete` is false when a store did not answer. */
  rows(ids: readonly string[]): { rows: Map<string, JobRow>; complete: boolean } {
    const rows = new Map<string, JobRow>();
    let complete = true;
    for (const [dir, st] of this.stores) {
      try {
        for (const r of st.getMany(ids)) {
          rows.set(r.id, r);
          this.homes.set(r.id, dir);
        }
        this.broken.delete(dir);
      } catch (e) {
        // A store busy beyond its timeout: next pass. Anything else: it is unusable now.
        complete = false;
        const cause = storageCause(e);
        const provider = this.sources.find((x) => x.stateDir === dir)?.provider ?? "?";
        if (!transient(cause)) this.broken.set(dir, { provider, stateDir: dir, reason: reasonFor(cause) });
      }
    }
    return { rows, complete };
  }

  /** The open store (and its source) a row read by rows() came from. */
  storeOf(id: string): { store: JobStore; source: JobStateDir } | undefined {
    const dir = this.homes.get(id);
    const store = dir === undefined ? undefined : this.stores.get(dir);
    const source = this.sources.find((x) => x.stateDir === dir);
    return store && source ? { store, source } : undefined;
  }

  close(): void {
    for (const st of this.stores.values()) st.close();
  }
}
