import type { TreeScan } from "./tree-scan.ts";

/**
 * What a job added, changed and deleted in the work tree, measured by dl from its two
 * walks (never by asking the job or running git): so the orchestrator and the user know
 * what to review without running anything. Files and links only; the list is capped, the
 * counts are not. Paths outside ignored folders come first (dependencies and build
 * output after them).
 */

export interface ChangedFile {
  path: string;
  change: "added" | "changed" | "deleted";
}

export interface ChangeSummary {
  added: number;
  changed: number;
  deleted: number;
  files: ChangedFile[];
  /** More changed files than `files` lists. */
  truncated: boolean;
}

export const CHANGE_LIST_CAP = 100;

function underIgnored(rel: string, ignored: ReadonlySet<string>): boolean {
  for (let at = rel.indexOf("/"); at > 0; at = rel.indexOf("/", at + 1)) {
    if (ignored.has(rel.slice(0, at))) return true;
  }
  return false;
}

export function summarizeChanges(before: TreeScan, after: TreeScan, ignored: ReadonlySet<string>): ChangeSummary {
  const all: ChangedFile[] = [];
  for (const [rel, now] of after.entries) {
    if (now.kind === "dir") continue;
    const was = before.entries.get(rel);
    if (!was) all.push({ path: rel, change: "added" });
    else if (was.kind !== now.kind || was.sig !== now.sig || was.id !== now.id)
      all.push({ path: rel, change: "changed" });
  }
  for (const [rel, was] of before.entries) {
    if (was.kind !== "dir" && !after.entries.has(rel)) all.push({ path: rel, change: "deleted" });
  }
  const rank = (f: ChangedFile) => (underIgnored(f.path, ignored) ? 1 : 0);
  all.sort((a, b) => rank(a) - rank(b) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const count = (c: ChangedFile["change"]) => all.filter((f) => f.change === c).length;
  return {
    added: count("added"),
    changed: count("changed"),
    deleted: count("deleted"),
    files: all.slice(0, CHANGE_LIST_CAP),
    truncated: all.length > CHANGE_LIST_CAP,
  };
}
