import { mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { entryExists } from "../sys/file-head.ts";
import { scrubTree } from "../sys/private-tree.ts";
import { moveOut, quarantinedIds, whyNot } from "./move-out.ts";
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
  /** The job's entries dl could not move out: still in the work tree. */
  remaining: string[];
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
 * Whether `now` can be `was` moved: the same kind and, for a file or link, the same size,
 * modification time, change time and mode. A rename of a folder above it changes none of
 * them; an edit does, and though the job can set the modification time back (`touch -d`,
 * and on a file system without birth times nothing else tells the files apart), it can
 * never set the change time back. With the birth time in the id this is the second check.
 */
function sameEntry(was: ScanEntry, now: ScanEntry): boolean {
  if (was.kind !== now.kind) return false;
  return was.kind === "dir" || was.sig === now.sig;
}

/**
 * Watched entries that are no longer at their place but are elsewhere in the tree: the
 * job renamed a folder above them (`mv scripts scripts-old`, a bound file's mount moves
 * with it) and may have put its own in their place. Found by id (device, inode, birth
 * time) and a matching signature (sameEntry).
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
  if (entryExists(join(root, m.from))) return;
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
  const removed = [...was.keys()].filter((rel) => !now.has(rel) && !moved.some((m) => m.from === rel));
  const removedAt = changed.length;
  for (const rel of namedChanges(before, after, o.named)) {
    if (!now.has(rel) && !hostsOwn(rel, after, host)) {
      impostors.push(rel);
      changed.push(`${rel} (written)`);
    }
  }
  if (changed.length === 0 && removed.length === 0) return null;
  const out = moveAllOut(after.root, impostors, o.quarantine);
  for (const m of moved) putBack(after.root, m);
  // An original the job moved into a folder of its own that was moved out is in quarantine now.
  const inQuarantine = out.quarantine ? quarantinedIds(out.quarantine) : new Map<string, string>();
  const gone = removed.map((rel) => {
    const at = inQuarantine.get(was.get(rel)!.id);
    return at ? `${rel} (moved by the job into a folder dl moved out: now ${at})` : `${rel} (removed)`;
  });
  changed.splice(removedAt, 0, ...gone);
  return { changed: [...changed, ...out.failed], quarantine: out.quarantine, remaining: out.remaining };
}

function scrubQuietly(dir: string): void {
  try {
    scrubTree(dir);
  } catch {
    // a file it cannot rewrite is left as moved: the verdict stands either way
  }
}

/**
 * Shallowest first (a folder's path is shorter than its entries'), so a new folder's own
 * new entries leave with it, not before it: moved one by one, each would land in the
 * quarantine where the folder's move then fails (ENOTEMPTY), the folder left in the tree
 * (a new `vendor/bin` a config puts on PATH). Never throws: what stays is named.
 */
function moveAllOut(root: string, impostors: string[], makeQuarantine: () => string) {
  let quarantine: string | null = null;
  let noQuarantine: string | null = null;
  const remaining: string[] = [];
  const failed: string[] = [];
  for (const rel of [...new Set(impostors)].sort((a, b) => a.length - b.length)) {
    if (!entryExists(join(root, rel))) continue;
    let why = noQuarantine;
    if (!why) {
      try {
        quarantine ??= makeQuarantine();
        why = moveOut(root, rel, quarantine);
      } catch (e) {
        noQuarantine = `no quarantine folder: ${whyNot(e)}`;
        why = noQuarantine;
      }
    }
    if (why === null) continue;
    remaining.push(rel);
    failed.push(`${rel} (could not be moved out: ${why})`);
  }
  // What the job wrote may hold a key from its environment: none stays in dl's state.
  if (quarantine) scrubQuietly(quarantine);
  return { quarantine, remaining, failed };
}
