import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describeError } from "../../errors.ts";
import { log } from "../../log.ts";
import { jobDirOf } from "../../sys/paths.ts";
import { scrubTree } from "../../sys/private-tree.ts";

/** A file of a job's folder, as dl show lists it (never followed: a link is shown as one). */
export type JobFile = { name: string; bytes: number; kind: "file" | "dir" | "link" | "other" };

/** Where a job's files are, and what is there now (the folder may be gone after dl reap). */
export function jobFiles(stateDir: string, id: string): { dir: string; files: JobFile[] } {
  const dir = jobDirOf(stateDir, id);
  let names: string[] = [];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return { dir, files: [] };
  }
  const files = names.slice(0, 200).map((name): JobFile => {
    try {
      const st = lstatSync(join(dir, name));
      const kind = st.isSymbolicLink() ? "link" : st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
      return { name, bytes: st.isFile() ? st.size : 0, kind };
    } catch {
      return { name, bytes: 0, kind: "other" };
    }
  });
  return { dir, files };
}

/**
 * What a job's child (and its CLI's own state, Codex's per-run SQLite home) left in the
 * job's folder, checked once the child is gone, by its supervisor at the run's end or by
 * the reaper when that supervisor died first: no key outlives the run in dl's state
 * (sys/private-tree.ts).
 */
export function scrubJobDir(id: string, jobDir: string): void {
  try {
    const removed = scrubTree(jobDir);
    if (removed.length) log.info(`job ${id}: removed ${removed.length} file(s) its child left holding a key`);
  } catch (e) {
    log.warn(`job ${id}: could not check the files its child left: ${describeError(e)}`);
  }
}
