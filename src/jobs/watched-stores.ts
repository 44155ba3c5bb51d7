import { existsSync } from "node:fs";
import { join } from "node:path";
import { DB_FILE } from "../store/db.ts";
import { JobStore } from "../store/jobs.ts";
import type { JobRow } from "../store/types.ts";
import type { JobStateDir } from "../sys/paths.ts";

/**
 * The job stores `dl wait` watches, read-only: opened as they appear, and asked cheaply
 * (PRAGMA data_version) whether anything was committed since the last look.
 */
export class WatchedStores {
  private readonly stores = new Map<string, JobStore>();
  private readonly versions = new Map<string, number>();

  constructor(private readonly sources: readonly JobStateDir[]) {
    this.open();
  }

  /** Opens the stores that exist now and were not open yet. */
  private open(): void {
    for (const s of this.sources) {
      if (this.stores.has(s.stateDir) || !existsSync(join(s.stateDir, DB_FILE))) continue;
      try {
        this.stores.set(s.stateDir, JobStore.open(s.stateDir));
      } catch {
        // Unreadable now; a later look tries again (the server reports storage errors).
      }
    }
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
    return [...this.stores.values()].flatMap((st) => st.listActive().map((r) => r.id));
  }

  /** The rows of `ids` found in any store; `complete` is false when a store did not answer. */
  rows(ids: readonly string[]): { rows: Map<string, JobRow>; complete: boolean } {
    const rows = new Map<string, JobRow>();
    let complete = true;
    for (const st of this.stores.values()) {
      try {
        for (const r of st.getMany(ids)) rows.set(r.id, r);
      } catch {
        // A store busy beyond its timeout: next pass.
        complete = false;
      }
    }
    return { rows, complete };
  }

  close(): void {
    for (const st of this.stores.values()) st.close();
  }
}
