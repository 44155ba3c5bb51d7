import { lstatSync, realpathSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { DlError } from "../errors.ts";
import { belongsToAnother, euid } from "./owned.ts";

/**
 * The folders above a state or cache folder (sshd's StrictModes): a user who may write in
 * one of them could rename dl's folder away between dl's check and SQLite's open and put
 * their own in its place. So every existing ancestor up to / must be this user's or
 * root's, and not writable by group or others unless sticky (/tmp, /var/tmp: a sticky
 * folder lets no one rename what another user owns). Checked on the path as given and on
 * its resolved form, so a symbolic link in the path is no way around it.
 */

const STICKY = 0o1000;

/** Why `ancestor` lets another user swap `dir`, as one line with the fix; null when it does not. */
function ancestorProblem(ancestor: string, st: Stats, dir: string): DlError | null {
  const me = euid();
  const data = { cause: "unsafe_ancestor", path: ancestor };
  if (st.uid !== me && st.uid !== 0)
    return new DlError(
      "storage",
      `${ancestor} ${belongsToAnother(st.uid)}: that user could swap dl's state folder ${dir} under it; keep dl's state under folders owned by you or root (point DELEGATE_*_STATE_DIR / DELEGATE_CACHE_DIR elsewhere)`,
      data,
    );
  if (st.isDirectory() && (st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0)
    return new DlError(
      "storage",
      `${ancestor} is writable by other users (mode ${(st.mode & 0o7777).toString(8)}, not sticky): they could swap dl's state folder ${dir} under it; run \`chmod go-w ${ancestor}\` (or \`chmod +t\`), or point dl elsewhere`,
      data,
    );
  return null;
}

/** `path` and every folder above it, deepest first. */
function chain(path: string): string[] {
  const out = [path];
  for (let d = path; d !== dirname(d); ) {
    d = dirname(d);
    out.push(d);
  }
  return out;
}

/** Throws when an existing folder above `dir` (its parent up to /) lets another user swap it. */
export function refuseUnsafeAncestors(dir: string): void {
  const parent = dirname(dir);
  let deepest: string | null = null;
  const seen = new Set<string>();
  const check = (paths: readonly string[]) => {
    for (const a of paths) {
      if (seen.has(a)) continue;
      seen.add(a);
      let st: Stats;
      try {
        st = lstatSync(a);
      } catch {
        continue; // missing: dl makes it, private
      }
      deepest ??= a;
      const problem = ancestorProblem(a, st, dir);
      if (problem) throw problem;
    }
  };
  check(chain(parent));
  if (deepest === null) return;
  let real: string;
  try {
    real = realpathSync(deepest);
  } catch {
    return;
  }
  check(chain(real));
}
