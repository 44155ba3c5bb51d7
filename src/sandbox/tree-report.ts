import { z } from "zod";
import type { ChangeSummary } from "./change-summary.ts";
import type { TreeVerdict } from "./tree-guard.ts";

/**
 * What a jailed job's result says about the work tree, measured by dl (never asked of the
 * job): the files it added, changed and deleted (a capped list, the counts whole), and
 * what dl kept read-only, so the orchestrator and the user know what to review and that
 * nothing was committed for them.
 */

export interface TreeReport {
  files_changed: ChangeSummary;
  kept_read_only: { count: number; paths: string[]; note: string };
}

/** Paths of kept_read_only listed (the count is whole). */
const KEPT_LIST_CAP = 20;

const KEPT_NOTE =
  "git metadata and the project's tool configuration were read-only to the job: it edited the work tree and committed nothing; review its changes, then commit them yourself";

export function treeReport(verdict: TreeVerdict, keptReadOnly: readonly string[]): TreeReport {
  const kept = [...new Set(keptReadOnly)].sort();
  return {
    files_changed: verdict.changes,
    kept_read_only: { count: kept.length, paths: kept.slice(0, KEPT_LIST_CAP), note: KEPT_NOTE },
  };
}

/** One line per fact, for a tool result or a terminal (at most `max` files named). */
export function treeReportLines(r: TreeReport, max = 10): string[] {
  const c = r.files_changed;
  const head = `files changed: ${c.added} added, ${c.changed} changed, ${c.deleted} deleted`;
  const shown = c.files.slice(0, max).map((f) => `  ${f.change} ${f.path}`);
  const more = c.added + c.changed + c.deleted - shown.length;
  return [
    head,
    ...shown,
    ...(more > 0 ? [`  … and ${more} more`] : []),
    `kept read-only: ${r.kept_read_only.count} paths (${r.kept_read_only.note})`,
  ];
}

const count = z.number().int().nonnegative();
/** A report as the row keeps it, read back (a row written by another dl version may lack it). */
const storedReport = z.object({
  files_changed: z.object({
    added: count,
    changed: count,
    deleted: count,
    files: z.array(z.object({ path: z.string(), change: z.enum(["added", "changed", "deleted"]) })),
    truncated: z.boolean(),
  }),
  kept_read_only: z.object({ count, paths: z.array(z.string()), note: z.string() }),
});

export function readTreeReport(v: { files_changed?: unknown; kept_read_only?: unknown }): TreeReport | null {
  const r = storedReport.safeParse(v);
  return r.success ? r.data : null;
}
