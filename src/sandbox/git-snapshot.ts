import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { JailPolicy } from "./policy.ts";

/**
 * The second line behind the jail's read-only git files: before the job, create the
 * placeholders the mounts need and take a snapshot of every git control path; after it,
 * compare. Any change fails the job (`jail_git_tampered`), is undone, and is named. Then
 * the placeholders go, so the repository is as it was before the job.
 */

type Entry =
  | { kind: "absent" }
  | { kind: "file"; bytes: Buffer; mode: number }
  | { kind: "symlink"; target: string }
  | { kind: "dir"; mode: number; id: string; children: Map<string, Entry> }
  /** Too big to keep: compared by size and mtime only, never restored. */
  | { kind: "big"; id: string };

const MAX_FILE = 1024 * 1024;
const MAX_ENTRIES = 2000;

export interface GitTamper {
  failureKind: "jail_git_tampered";
  message: string;
  changed: string[];
}

export interface GitControlGuard {
  /** Compares with the snapshot, restores it, removes the placeholders. Call once. */
  check(): GitTamper | null;
}

function snap(path: string, budget: { left: number }): Entry {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return { kind: "absent" };
  }
  budget.left--;
  const id = `${st.dev}:${st.ino}`;
  if (st.isSymbolicLink()) return { kind: "symlink", target: readlinkSync(path) };
  if (st.isDirectory()) {
    const children = new Map<string, Entry>();
    for (const name of readdirSync(path).sort()) {
      if (budget.left <= 0) return { kind: "big", id: `${id}:${st.mtimeMs}` };
      children.set(name, snap(join(path, name), budget));
    }
    return { kind: "dir", mode: st.mode & 0o7777, id, children };
  }
  if (!st.isFile() || st.size > MAX_FILE) return { kind: "big", id: `${id}:${st.size}:${st.mtimeMs}` };
  return { kind: "file", bytes: readFileSync(path), mode: st.mode & 0o7777 };
}

/** Paths under `path` that differ between two snapshots (a folder's own id is not compared). */
function diff(path: string, a: Entry, b: Entry, out: string[]): void {
  if (a.kind !== b.kind) {
    out.push(path);
    return;
  }
  if (a.kind === "file" && b.kind === "file") {
    if (!a.bytes.equals(b.bytes) || a.mode !== b.mode) out.push(path);
  } else if (a.kind === "symlink" && b.kind === "symlink") {
    if (a.target !== b.target) out.push(path);
  } else if (a.kind === "big" && b.kind === "big") {
    if (a.id !== b.id) out.push(path);
  } else if (a.kind === "dir" && b.kind === "dir") {
    for (const name of new Set([...a.children.keys(), ...b.children.keys()])) {
      diff(
        join(path, name),
        a.children.get(name) ?? { kind: "absent" },
        b.children.get(name) ?? { kind: "absent" },
        out,
      );
    }
  }
}

function write(path: string, e: Entry): void {
  rmSync(path, { recursive: true, force: true });
  if (e.kind === "file") {
    writeFileSync(path, e.bytes, { mode: e.mode });
    chmodSync(path, e.mode);
  } else if (e.kind === "symlink") symlinkSync(e.target, path);
  else if (e.kind === "dir") {
    mkdirSync(path, { mode: e.mode });
    for (const [name, child] of e.children) write(join(path, name), child);
  }
}

/**
 * A pinned folder that is no longer the same folder (renamed away and replaced): put the
 * stand-in aside and the original back, if it is still next to it. True when it is back.
 */
function restorePin(path: string, id: string): boolean {
  const parent = dirname(path);
  for (const name of readdirSync(parent)) {
    const p = join(parent, name);
    const st = lstatSync(p);
    if (`${st.dev}:${st.ino}` !== id || p === path) continue;
    renameSync(path, join(parent, `${basename(path)}.dl-tampered-${Date.now()}`));
    renameSync(p, path);
    return true;
  }
  return false;
}

function isPlaceholder(e: Entry, placeholder: string | null): boolean {
  if (placeholder === null) return false;
  if (e.kind === "dir") return e.children.size === 0;
  return e.kind === "file" && e.bytes.toString() === placeholder;
}

function identity(path: string): string | null {
  try {
    const st = lstatSync(path);
    return `${st.dev}:${st.ino}:${st.isDirectory() ? "d" : "f"}`;
  } catch {
    return null;
  }
}

/** Placeholders first (the mounts need them), then the snapshot the job is held to. */
export function guardGitControl(policy: JailPolicy): GitControlGuard {
  const created: string[] = [];
  for (const c of policy.gitProtected) {
    if (c.placeholder === null || identity(c.path) !== null) continue;
    if (c.kind === "dir") mkdirSync(c.path, { mode: 0o755 });
    else writeFileSync(c.path, c.placeholder, { mode: 0o644 });
    created.push(c.path);
  }
  const budget = { left: MAX_ENTRIES };
  const pins = policy.gitPinned.map((p) => ({ path: p.path, id: identity(p.path) }));
  // A linked worktree's `.git` file is pinned and its content (gitdir: …) protected too.
  const controls = [
    ...policy.gitProtected,
    ...policy.gitPinned.filter((p) => p.kind === "file").map((p) => ({ path: p.path, placeholder: null })),
  ];
  const files = controls.map((c) => ({ path: c.path, entry: snap(c.path, budget), placeholder: c.placeholder }));
  let checked = false;
  return {
    check() {
      if (checked) return null;
      checked = true;
      return checkAndRestore(pins, files, created);
    },
  };
}

function checkAndRestore(
  pins: { path: string; id: string | null }[],
  files: { path: string; entry: Entry; placeholder: string | null }[],
  created: string[],
): GitTamper | null {
  const changed: string[] = [];
  const lost: string[] = [];
  for (const pin of pins) {
    if (identity(pin.path) === pin.id) continue;
    changed.push(`${pin.path} (replaced)`);
    // Without the original folder back, nothing below it is written: it may now be a
    // link to anywhere.
    if (!pin.id || !restorePin(pin.path, pin.id.replace(/:[df]$/, ""))) lost.push(pin.path);
  }
  for (const f of files) {
    if (lost.some((l) => f.path.startsWith(`${l}/`))) continue;
    const current = snap(f.path, { left: MAX_ENTRIES });
    // Another job on the same repository (a linked worktree's) removed a placeholder
    // both used: gone is how it was before either job.
    if (current.kind === "absent" && isPlaceholder(f.entry, f.placeholder)) continue;
    const now: string[] = [];
    diff(f.path, f.entry, current, now);
    if (now.length === 0) continue;
    changed.push(...now);
    if (f.entry.kind !== "big") write(f.path, f.entry);
  }
  for (const p of created.reverse()) rmSync(p, { recursive: true, force: true });
  if (changed.length === 0) return null;
  const restored = lost.length ? `; could not put back ${lost.join(", ")}: check them by hand` : "; restored";
  return {
    failureKind: "jail_git_tampered",
    message: `the job changed git files that run or steer git on the host (${changed.join(", ")})${restored}. Its other changes are kept; review them before you commit.`,
    changed,
  };
}
