import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  type Stats,
} from "node:fs";
import { basename, join } from "node:path";
import { euid, notOwned } from "./owned.ts";
import { rewritePrivate } from "./private-file.ts";
import { binaryHoldsSecret, holdsSecret, learnNamed } from "./redact.ts";

/**
 * Whole trees of dl's private state, walked without following a link: tightened (what an
 * older dl left open; an entry of another user refused, sys/owned.ts), and scrubbed after
 * a job (what its child wrote there, checked for keys; what is not this user's left alone).
 */

/** Entries one pass over a tree looks at, at most: a state dir of a normal life holds far fewer. */
const TREE_MAX_ENTRIES = 50_000;

function lstatQuiet(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null; // gone meanwhile
  }
}

/**
 * Every entry under `root` that is this user's and not a link, depth first, bounded;
 * `visit` may throw. One of another user is handed to `foreign`, which may throw (the
 * walk stops), and never visited.
 */
function walkOwn(root: string, visit: (path: string, st: Stats) => void, foreign?: (path: string, st: Stats) => void) {
  const stack = [root];
  let seen = 0;
  while (stack.length > 0 && seen < TREE_MAX_ENTRIES) {
    const dir = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (++seen > TREE_MAX_ENTRIES) break;
      const path = join(dir, name);
      const st = lstatQuiet(path);
      if (st && st.uid !== euid()) foreign?.(path, st);
      if (!st || st.uid !== euid() || st.isSymbolicLink()) continue;
      if (st.isDirectory()) stack.push(path);
      try {
        visit(path, st);
      } catch {
        // gone meanwhile, or not ours to change
      }
    }
  }
}

const tightened = new Set<string>();

/** One entry made private when it is open to others: a folder 0700, a file 0600. */
function tightenEntry(path: string, st: Stats): void {
  if ((st.mode & 0o077) !== 0 && (st.isDirectory() || st.isFile())) chmodSync(path, st.isDirectory() ? 0o700 : 0o600);
}

/**
 * Everything under `root` (its job folders, transcripts, locks, whatever an older dl left
 * 0755 or 0644) made 0700 / 0600, once per process and root; links are never followed.
 * An entry of another user is refused, naming it: dl would use it (a planted store's
 * -wal, a job folder, a conversation) and its owner read what dl wrote there.
 */
export function tightenTree(root: string): void {
  if (tightened.has(root)) return;
  walkOwn(root, tightenEntry, (path, st) => {
    throw notOwned(path, st);
  });
  tightened.add(root);
}

/** Files a child left that are bigger than this are not read back to be checked: they go. */
const SCRUB_MAX_BYTES = 32 * 1024 * 1024;

/** One file a child wrote, made safe to keep: redacted in place if text, removed if it is binary and holds a key. */
function scrubFile(path: string, st: Stats): "kept" | "redacted" | "removed" {
  if (st.size > SCRUB_MAX_BYTES) {
    rmSync(path, { force: true });
    return "removed";
  }
  const read = readChildText(path);
  if (!read) return "kept";
  const { text, binary } = read;
  if (!(binary ? binaryHoldsSecret(text) : holdsSecret(text))) return "kept";
  // A database or an archive cannot be edited byte for byte: what holds a key is not kept.
  if (binary) rmSync(path, { force: true });
  else rewritePrivate(path, text);
  return binary ? "removed" : "redacted";
}

/** A regular file a child wrote, as text (a binary one as latin1), opened without following a link; null for anything else. */
function readChildText(path: string): { text: string; binary: boolean } | null {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let bytes: Buffer;
  try {
    if (!fstatSync(fd).isFile()) return null;
    bytes = readFileSync(fd);
  } finally {
    closeSync(fd);
  }
  const binary = bytes.includes(0);
  return { text: bytes.toString(binary ? "latin1" : "utf8"), binary };
}

/**
 * After a job's child ended: every file it (or the CLI's own state, Codex's per-run
 * SQLite home) left under `dir` is checked, text redacted in place, a binary file holding
 * a key removed, so no key outlives the run in dl's state; what it made with the user's
 * umask is made private like the rest. Returns the paths it removed.
 */
export function scrubTree(dir: string): string[] {
  const removed: string[] = [];
  // Learned from every text file first, then cut: a value one file names (`cat .env` in
  // Codex's events) is cut from all of them, whichever order the walk takes.
  walkOwn(dir, (path, st) => {
    const read = st.isFile() && st.size <= SCRUB_MAX_BYTES ? readChildText(path) : null;
    if (read && !read.binary) learnNamed(read.text);
  });
  // An entry whose name holds a key (a file the child named after a password) goes whole:
  // `dl show` lists names, and a later process knows nothing this one learned.
  const named: string[] = [];
  walkOwn(dir, (path, st) => {
    if (holdsSecret(basename(path))) named.push(path);
    else if (st.isFile() && scrubFile(path, st) === "removed") removed.push(path);
    else tightenEntry(path, st);
  });
  for (const path of named) rmSync(path, { recursive: true, force: true });
  return [...removed, ...named];
}
