import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";
import {
  isDotGit,
  isPackagesFolder,
  looksLikeGitDir,
  type ProtectRule,
  ruleForLinkedFolder,
  ruleForName,
} from "../sys/protected-names.ts";

/**
 * One walk of a workdir, without following links: what is there, so that what a job
 * added, changed and removed can be told afterwards (by dl, measuring, not by asking the
 * job or running git), and where the entries are that git or a host tool would obey:
 * every `.git` (folder, gitfile or link), every folder git takes for a repository of its
 * own (HEAD, objects/ and refs/ side by side: a bare repository a user might `cd` into),
 * and every entry a protect rule names. The walk does not enter those: they are bound
 * read-only, so nothing below them can change.
 */

export interface ScanEntry {
  kind: "dir" | "file" | "link" | "other";
  /** Device, inode and birth time (entryId): the same entry, wherever it is now. */
  id: string;
  /** What changes when the content or mode does; ctime too, which no one can set back. */
  sig: string;
}

export interface TreeScan {
  root: string;
  /** Path relative to root → entry, for everything outside the protected entries below. */
  entries: Map<string, ScanEntry>;
  /** `.git` entries and repository-like folders. */
  gitEntries: Map<string, ScanEntry>;
  /** Entries a protect rule names, outside ignored folders. */
  ruleEntries: Map<string, { entry: ScanEntry; rule: ProtectRule }>;
  /** The walk stopped at the entry budget: the scan is incomplete. */
  truncated: boolean;
}

export interface ScanOptions {
  /** Folders git ignores (relative to root): dependencies and build output, not configuration. */
  ignored: ReadonlySet<string>;
  maxEntries?: number;
}

/** Whether `rel` lies below one of the ignored folders (ScanOptions.ignored). */
export const underIgnored = (rel: string, ignored: ReadonlySet<string>) =>
  [...ignored].some((d) => rel.startsWith(`${d}/`));

/** Past this, a workdir is too large to account for (and the job is refused). */
export const MAX_SCAN_ENTRIES = 2_000_000;
/** The walk gives the event loop a turn this often, so a server keeps answering. */
const YIELD_EVERY = 4000;

/**
 * Device, inode and birth time: an inode number the job freed (`ln -sfn` over a link) is
 * given to the next file it makes, so the number alone would take the job's new file for
 * the original moved elsewhere, and put it back in the original's place.
 */
export function entryId(st: Pick<Stats, "dev" | "ino" | "birthtimeMs">): string {
  return `${st.dev}:${st.ino}:${st.birthtimeMs}`;
}

function entryOf(st: Stats): ScanEntry {
  const kind = st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  const sig = kind === "dir" ? `${st.mode}` : `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}`;
  return { kind, id: entryId(st), sig };
}

function lstat(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null; // gone between the listing and the look
  }
}

interface Frame {
  rel: string;
  name: string | null;
  ignored: boolean;
  /** Below a node_modules folder (protected-names.ts projectOnly). */
  inPackages: boolean;
}

/** Looks at one folder's children: records them and returns the folders to enter. */
function visit(root: string, f: Frame, scan: TreeScan, o: ScanOptions): Frame[] {
  let names: string[];
  try {
    names = readdirSync(f.rel ? join(root, f.rel) : root);
  } catch {
    return []; // unreadable or gone: nothing below it to account for
  }
  const next: Frame[] = [];
  for (const name of names) {
    const rel = f.rel ? `${f.rel}/${name}` : name;
    const st = lstat(join(root, rel));
    if (!st) continue;
    const entry = entryOf(st);
    if (isDotGit(name)) {
      scan.gitEntries.set(rel, entry);
      continue;
    }
    // A link named as a folder a rule protects names under stands for that folder (ruleForLinkedFolder).
    const linked = entry.kind === "link" ? ruleForLinkedFolder(name, f.inPackages) : null;
    const rule = f.ignored ? null : (ruleForName(name, f.name, f.inPackages) ?? linked);
    if (rule) {
      scan.ruleEntries.set(rel, { entry, rule });
      continue;
    }
    scan.entries.set(rel, entry);
    if (entry.kind === "dir")
      next.push({
        rel,
        name,
        ignored: f.ignored || o.ignored.has(rel),
        inPackages: f.inPackages || isPackagesFolder(name),
      });
  }
  if (f.rel && looksLikeGitDir(names)) {
    // A repository of its own under another name: like `.git`, not entered.
    const own = scan.entries.get(f.rel);
    if (own) scan.gitEntries.set(f.rel, own);
    for (const name of names) scan.entries.delete(`${f.rel}/${name}`);
    return [];
  }
  return next;
}

export async function scanTree(root: string, o: ScanOptions): Promise<TreeScan> {
  const scan: TreeScan = { root, entries: new Map(), gitEntries: new Map(), ruleEntries: new Map(), truncated: false };
  const max = o.maxEntries ?? MAX_SCAN_ENTRIES;
  const stack: Frame[] = [{ rel: "", name: null, ignored: false, inPackages: false }];
  let sinceYield = 0;
  while (stack.length > 0) {
    const before = scan.entries.size;
    stack.push(...visit(root, stack.pop()!, scan, o));
    sinceYield += scan.entries.size - before + 1;
    if (scan.entries.size > max) {
      scan.truncated = true;
      break;
    }
    if (sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await Bun.sleep(0);
    }
  }
  return scan;
}
