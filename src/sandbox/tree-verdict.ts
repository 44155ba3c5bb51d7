import { cpSync, lstatSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ScanEntry, TreeScan } from "./tree-scan.ts";

/**
 * After a job: every `.git` entry, repository-like folder and protected entry is compared
 * with the walk before it. One that is new, or is no longer the same entry, is the job's
 * doing (the old ones were read-only): it is moved out of the workdir into the job's own
 * folder, where no host tool looks, and named. An original the job moved elsewhere (with
 * its parent folder) is put back where it was once the impostor is gone.
 */

export interface Tampered {
  /** Path relative to the workdir, with what happened: "a/.git (new)". */
  changed: string[];
  /** Where the moved-out entries are now; null when nothing was moved. */
  quarantine: string | null;
}

type Watched = Map<string, ScanEntry>;

/** Entries a host would obey, by path: git entries, protected ones and the paths git's config names. */
function watchedOf(scan: TreeScan, named: readonly string[]): Watched {
  const out: Watched = new Map(scan.gitEntries);
  for (const [rel, { entry }] of scan.ruleEntries) out.set(rel, entry);
  for (const rel of named) {
    const e = scan.entries.get(rel);
    if (e) out.set(rel, e);
  }
  return out;
}

/** Paths under a config-named path that appeared or changed (a hooks dir gaining a hook). */
function namedChanges(before: TreeScan, after: TreeScan, named: readonly string[]): string[] {
  const out: string[] = [];
  for (const [rel, now] of after.entries) {
    if (!named.some((n) => rel === n || rel.startsWith(`${n}/`))) continue;
    const was = before.entries.get(rel);
    if (!was || was.id !== now.id || was.sig !== now.sig) out.push(rel);
  }
  return out;
}

/** Whether `path` itself is there: a link counts whatever it points at (a job's `.git` link to a folder already moved out too). */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function moveOut(root: string, rel: string, quarantine: string): void {
  const dest = join(quarantine, rel);
  mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
  try {
    renameSync(join(root, rel), dest);
  } catch {
    // Another file system (EXDEV): copy without following links, then remove.
    cpSync(join(root, rel), dest, { recursive: true, verbatimSymlinks: true });
    rmSync(join(root, rel), { recursive: true, force: true });
  }
}

/** At or under a stand-in that is still the one dl made: written by the host, never by the job (stand-ins.ts). */
function hostsOwn(rel: string, after: TreeScan, hostOnly: ReadonlyMap<string, string>): boolean {
  for (const [at, id] of hostOnly) {
    if ((rel === at || rel.startsWith(`${at}/`)) && lookup(after, at)?.id === id) return true;
  }
  return false;
}

function lookup(scan: TreeScan, rel: string): ScanEntry | undefined {
  return scan.entries.get(rel) ?? scan.ruleEntries.get(rel)?.entry ?? scan.gitEntries.get(rel);
}

/**
 * Whether `now` can be `was` moved: the same kind and, for a file or link, the same size
 * and modification time (a rename keeps both). With the birth time in the id this is the
 * second check, for file systems that keep none: a new file on a freed inode differs.
 */
function sameEntry(was: ScanEntry, now: ScanEntry): boolean {
  if (was.kind !== now.kind) return false;
  return was.kind === "dir" || was.sig.split(":").slice(0, 2).join(":") === now.sig.split(":").slice(0, 2).join(":");
}

/**
 * Watched entries that are no longer at their place but are elsewhere in the tree: the
 * job renamed a folder above them (`mv scripts scripts-old`, a bound file's mount moves
 * with it) and may have put its own in their place. Found by device and inode.
 */
function displaced(was: Watched, now: Watched, after: TreeScan, moved: { from: string }[]) {
  const where = new Map<string, { rel: string; e: ScanEntry }>();
  for (const [rel, e] of after.entries) where.set(e.id, { rel, e });
  for (const [rel, e] of after.gitEntries) where.set(e.id, { rel, e });
  for (const [rel, { entry }] of after.ruleEntries) where.set(entry.id, { rel, e: entry });
  const out: { from: string; to: string }[] = [];
  for (const [rel, e] of was) {
    if (now.get(rel)?.id === e.id || moved.some((m) => m.from === rel)) continue;
    const to = where.get(e.id);
    if (to && to.rel !== rel && !now.has(to.rel) && sameEntry(e, to.e)) out.push({ from: rel, to: to.rel });
  }
  return out;
}

/** The original back at its place once the impostor is gone (its folder made again if the job removed it). */
function putBack(root: string, m: { from: string; to: string }): void {
  if (present(join(root, m.from))) return;
  try {
    mkdirSync(dirname(join(root, m.from)), { recursive: true });
    renameSync(join(root, m.to), join(root, m.from));
  } catch {
    // gone meanwhile, or its place taken by a file: it stays where the job left it, named in the verdict
  }
}

export function judgeTree(
  before: TreeScan,
  after: TreeScan,
  o: { named: readonly string[]; hostOnly?: ReadonlyMap<string, string>; quarantine: () => string },
): Tampered | null {
  const host = o.hostOnly ?? new Map<string, string>();
  const was = watchedOf(before, o.named);
  const now = watchedOf(after, o.named);
  for (const rel of [...now.keys()]) if (!was.has(rel) && hostsOwn(rel, after, host)) now.delete(rel);
  const byId = new Map([...was].map(([rel, e]) => [e.id, rel]));
  const impostors: string[] = [];
  const moved: { from: string; to: string }[] = [];
  const changed: string[] = [];
  for (const [rel, e] of now) {
    const old = was.get(rel);
    if (old && old.id === e.id && (old.kind === "dir" || old.sig === e.sig)) continue;
    const origin = byId.get(e.id);
    if (origin !== undefined && origin !== rel && sameEntry(was.get(origin)!, e)) {
      moved.push({ from: origin, to: rel });
      changed.push(`${rel} (moved from ${origin})`);
    } else {
      impostors.push(rel);
      changed.push(`${rel} (${old ? "replaced" : "new"})`);
    }
  }
  for (const m of displaced(was, now, after, moved)) {
    moved.push(m);
    changed.push(`${m.from} (moved to ${m.to})`);
  }
  for (const rel of was.keys())
    if (!now.has(rel) && !moved.some((m) => m.from === rel)) changed.push(`${rel} (removed)`);
  for (const rel of namedChanges(before, after, o.named)) {
    if (!now.has(rel) && !hostsOwn(rel, after, host)) {
      impostors.push(rel);
      changed.push(`${rel} (written)`);
    }
  }
  if (changed.length === 0) return null;
  let quarantine: string | null = null;
  // Deepest first, so a new folder's own new entries leave with it, not twice.
  for (const rel of [...new Set(impostors)].sort((a, b) => b.length - a.length)) {
    if (!present(join(after.root, rel))) continue;
    quarantine ??= o.quarantine();
    moveOut(after.root, rel, quarantine);
  }
  for (const m of moved) putBack(after.root, m);
  return { changed, quarantine };
}
