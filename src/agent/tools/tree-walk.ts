import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { FD_PATHS, fdPath } from "./dir-walk.ts";
import { GitIgnores } from "./gitignore.ts";
import { type Confinement, openConfined, proveSameFile } from "./open-confined.ts";

/**
 * The files under a confined directory, for search_files and list_files: sorted by name,
 * `.gitignore` honoured, `.git` skipped, and no symlink followed (a link inside the
 * workdir can point anywhere, so a walk never goes through one, like ripgrep's default).
 *
 * Race-safe the way read_file is: on Linux every directory is opened through the
 * descriptor of its parent with O_NOFOLLOW (dir-walk.ts) and listed through its own
 * descriptor, so a directory swapped for a symlink mid-walk is not entered; elsewhere each
 * directory and file is opened by path with O_NOFOLLOW and proved to be inside the workdir
 * (open-confined.ts), and a directory is proved again after it was listed.
 */
export type WalkLimits = {
  /** Directory entries looked at before the walk stops (a cut, reported). */
  maxEntries: number;
  /** performance.now() after which the walk stops. */
  deadline: number;
};

export type WalkStats = {
  entries: number;
  symlinks: number;
  /** Why the walk ended early, if it did. */
  cut?: "entries" | "time";
};

export type FileVisit = {
  /** Relative to the workdir, with `/` separators. */
  rel: string;
  /** Opens the file read-only, non-blocking, without following a link; the caller closes it. */
  open(): number;
};

type Dir = { fd: number; abs: string };

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

export const toSlash = (p: string): string => (sep === "/" ? p : p.split(sep).join("/"));

/** Walks `rootAbs` (a directory confinePath returned). The generator's return value is the stats. */
export function* walkFiles(rootAbs: string, where: Confinement, limits: WalkLimits): Generator<FileVisit, WalkStats> {
  const stats: WalkStats = { entries: 0, symlinks: 0 };
  const ignores = GitIgnores.forRoot(rootAbs, where);
  // Opened without O_DIRECTORY: the root may be one file the model named.
  const root = openConfined(rootAbs, FILE_FLAGS, where);
  try {
    if (root.st.isFile()) {
      const rel = toSlash(relative(where.workdir, rootAbs));
      yield { rel, open: () => openConfined(rootAbs, FILE_FLAGS, where).fd };
    } else if (root.st.isDirectory()) {
      yield* walkDir({ fd: root.fd, abs: rootAbs }, ignores, where, limits, stats);
    }
  } finally {
    closeSync(root.fd);
  }
  return stats;
}

function* walkDir(
  dir: Dir,
  ignores: GitIgnores,
  where: Confinement,
  limits: WalkLimits,
  stats: WalkStats,
): Generator<FileVisit, void> {
  const entries = listDir(dir, where);
  const here = ignores.enter(dir, entries, where);
  for (const e of entries) {
    if (stats.cut) return;
    if (++stats.entries > limits.maxEntries) stats.cut = "entries";
    else if (performance.now() > limits.deadline) stats.cut = "time";
    if (stats.cut) return;
    if (e.name === ".git") continue;
    if (e.isSymbolicLink()) {
      stats.symlinks++;
      continue;
    }
    const abs = join(dir.abs, e.name);
    const rel = toSlash(relative(where.workdir, abs));
    if (e.isDirectory()) {
      if (here.ignored(rel, true)) continue;
      const child = openChild(dir, e.name, DIR_FLAGS, where);
      if (child === null) {
        stats.symlinks++;
        continue;
      }
      try {
        yield* walkDir({ fd: child, abs }, here, where, limits, stats);
      } finally {
        closeSync(child);
      }
    } else if (e.isFile() && !here.ignored(rel, false)) {
      yield { rel, open: () => openChild(dir, e.name, FILE_FLAGS, where) ?? refusedLink(rel) };
    }
  }
}

function refusedLink(rel: string): never {
  throw Object.assign(new Error(`${rel} became a symlink`), { code: "ELOOP" });
}

/** The directory's entries sorted by name (readdir order differs between file systems). */
function listDir(dir: Dir, where: Confinement): Dirent[] {
  const byPath = !FD_PATHS || where.allowEscape;
  const entries = readdirSync(byPath ? dir.abs : fdPath(dir.fd), { withFileTypes: true });
  // Listed by name: prove the name still led to the directory we hold open.
  if (byPath && !where.allowEscape) proveSameFile(dir.abs, fstatSync(dir.fd), where.workdir);
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Opens `name` inside `dir` without following a link: null when it is (or just became)
 * one, or when the proof of confinement fails. Other errors (permissions) are thrown.
 */
function openChild(dir: Dir, name: string, flags: number, where: Confinement): number | null {
  try {
    if (FD_PATHS && !where.allowEscape) return openSync(fdPath(dir.fd, name), flags | constants.O_NOFOLLOW);
    return openConfined(join(dir.abs, name), flags, where).fd;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "path_escape") return null;
    throw e;
  }
}
