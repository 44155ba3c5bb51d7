import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, rmdirSync, unlinkSync } from "node:fs";
import { dirname, relative } from "node:path";
import { entryExists } from "../sys/file-head.ts";
import { ruleForPath } from "../sys/protected-names.ts";
import { entryId } from "./tree-scan.ts";

/** An entry inside the workdir the jail binds read-only (it exists once the stand-ins are made). */
export interface ProtectedPath {
  path: string;
  kind: "dir" | "file";
}

/**
 * Empty, read-only stand-ins for entries that are absent before a job but that a host
 * reads while it runs, so the job cannot create them at all (the check after the job is
 * the second line): the workdir's `.git` and `.claude`, a `core.hooksPath` folder husky
 * has not made yet, a config file git's configuration includes. Made on the host (the
 * jail binds the workdir from there), bound read-only in the jail, removed afterwards if
 * still empty. The jail cannot write into a read-only mount nor replace a mount point, so
 * whatever a stand-in holds after the job was written by the host (`npm install` filling
 * `.husky/_` meanwhile, Claude Code saving a permission in `.claude`): it stays, and is
 * not the job's doing.
 */

export interface StandInWish {
  path: string;
  kind: "dir" | "file";
}

export interface StandIns {
  /** What the jail binds read-only: each stand-in, and any folder made for one that a rule names. */
  mounts: ProtectedPath[];
  /** Workdir-relative path → device:inode:birth time (entryId) of each mounted entry: the host's own, whatever it holds later. */
  hostOnly: Map<string, string>;
  /** Removes what is still empty, deepest first. */
  remove(): void;
}

const idOf = (path: string) => {
  const st = lstatSync(path);
  return entryId(st);
};

function makeFile(path: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  closeSync(fd);
}

/** rmdir or, for a file, unlink while it is still the empty file made here. */
function removeIfEmpty(path: string, kind: "dir" | "file", id: string): void {
  try {
    if (kind === "dir") rmdirSync(path);
    else {
      const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const st = fstatSync(fd);
      closeSync(fd);
      if (st.isFile() && st.size === 0 && entryId(st) === id) unlinkSync(path);
    }
  } catch {
    // not empty, or already gone: the host's now
  }
}

export function makeStandIns(workdir: string, wishes: readonly StandInWish[]): StandIns {
  const made: { path: string; kind: "dir" | "file"; id: string; mounted: boolean }[] = [];
  const wanted = new Set(wishes.map((w) => w.path));
  for (const w of wishes) {
    if (entryExists(w.path)) continue;
    const missing: string[] = [];
    for (let p = dirname(w.path); p !== workdir && !entryExists(p); p = dirname(p)) missing.unshift(p);
    for (const p of [...missing, w.path]) {
      const kind = p === w.path ? w.kind : "dir";
      if (kind === "dir") mkdirSync(p, { mode: 0o755 });
      else makeFile(p);
      const mounted = wanted.has(p) || ruleForPath(relative(workdir, p)) !== null;
      made.push({ path: p, kind, id: idOf(p), mounted });
    }
  }
  const mounted = made.filter((m) => m.mounted);
  return {
    mounts: mounted.map((m) => ({ path: m.path, kind: m.kind })),
    hostOnly: new Map(mounted.map((m) => [relative(workdir, m.path), m.id])),
    remove() {
      for (const m of [...made].reverse()) removeIfEmpty(m.path, m.kind, m.id);
    },
  };
}
