import { PROVIDERS } from "../../providers.ts";
import { eachStore } from "../../store/each-store.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { JobRow } from "../../store/types.ts";
import type { JobStateDir } from "../../sys/paths.ts";
import { type JobVerdict, judgeJob } from "../engine/display-state.ts";
import { jobLiveness, jobWindow, type Liveness, settledLiveness } from "../engine/liveness.ts";
import type { Identities } from "../engine/machine.ts";

/**
 * The shell's read side of the job stores (dl jobs, show, logs, cancel): every known store
 * opened as it is found, each row read with its verdict (display-state.ts), so a job reads
 * the same here as in dl wait, dl status and the MCP poll tools.
 */
export type FoundJob = {
  store: JobStateDir;
  row: JobRow;
  live: Liveness;
  verdict: JobVerdict;
  /** An active job's window: "closed" when the server that took its call is gone (liveness.ts jobWindow). */
  window: "open" | "closed" | null;
};

/** A store that exists but could not be read: its jobs are not in the answer. */
export type StoreProblem = { provider: string; state_dir: string; error: string };

/** Runs `fn` on each existing store, read-only; unreadable ones are reported, not thrown. */
function readEach<T>(
  stores: readonly JobStateDir[],
  fn: (store: JobStore, s: JobStateDir) => T[],
): { found: T[]; problems: StoreProblem[] } {
  const found: T[] = [];
  const problems: StoreProblem[] = [];
  for (const v of eachStore(stores, fn, { readonly: true })) {
    if ("value" in v) found.push(...v.value);
    else if ("error" in v) problems.push({ provider: v.source.provider, state_dir: v.source.stateDir, error: v.error });
  }
  return { found, problems };
}

/** A row with how it reads now. */
function withVerdict(store: JobStateDir, first: JobRow, identities: Identities, st: JobStore): FoundJob {
  const liveness = (r: JobRow) => jobLiveness(r, identities);
  const { row, live } = settledLiveness(first, liveness(first), () => st.get(first.id), liveness);
  return { store, row, live, verdict: judgeJob(row, live), window: jobWindow(row, identities) };
}

/** The stores an id of this shape can be in (its provider's, wherever they are). */
function storesFor(stores: readonly JobStateDir[], id: string): JobStateDir[] {
  const provider = PROVIDERS.find((d) => id.startsWith(d.idPrefix))?.name;
  return stores.filter((s) => s.provider === provider);
}

/** One job by id across the known stores, or null with the stores that could not be read. */
export function findJob(
  stores: readonly JobStateDir[],
  id: string,
  identities: Identities,
): { job: FoundJob | null; problems: StoreProblem[] } {
  const r = readEach(storesFor(stores, id), (st, s) => {
    const row = st.get(id);
    return row ? [withVerdict(s, row, identities, st)] : [];
  });
  return { job: r.found[0] ?? null, problems: r.problems };
}

export type JobFilter = { status?: string; kind?: string; project?: string; limit: number };

/** Jobs of every known store, newest first, filtered (status is the displayed state). */
export function listJobs(
  stores: readonly JobStateDir[],
  f: JobFilter,
  identities: Identities,
): { jobs: FoundJob[]; problems: StoreProblem[] } {
  const chosen = f.kind ? stores.filter((s) => s.provider === f.kind) : stores;
  // Each store gives its newest rows; a filter may need more than `limit` of them.
  const per = f.status || f.project ? 10_000 : f.limit;
  const r = readEach(chosen, (st, s) => st.listRecent(per).map((row) => withVerdict(s, row, identities, st)));
  const jobs = r.found
    .filter((j) => !f.status || j.verdict.state === f.status || (f.status === "orphaned" && j.verdict.orphaned))
    .filter((j) => !f.project || j.row.project === f.project || j.row.project.startsWith(`${f.project}/`))
    .sort((a, b) => b.row.created_at - a.row.created_at)
    .slice(0, f.limit);
  return { jobs, problems: r.problems };
}
