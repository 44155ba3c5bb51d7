import { accessSync, constants, type Stats, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { DB_FILE } from "./types.ts";

/**
 * Whether a store's database is there to read: `absent` (no job recorded there yet, or
 * its folder gone), `present`, or why this user cannot read it, naming the folder that
 * stops it, its owner and mode, and what to do. A store this user cannot even see into is
 * not an empty one: every command that reads stores says so instead of leaving its jobs out.
 */
export type StoreAccess = { state: "absent" } | { state: "present" } | { state: "unreadable"; reason: string };

export function storeAccess(stateDir: string): StoreAccess {
  const file = join(stateDir, DB_FILE);
  try {
    statSync(file);
    accessSync(file, constants.R_OK);
    return { state: "present" };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "unknown";
    if (code === "ENOENT") return { state: "absent" };
    if (code === "ENOTDIR")
      return {
        state: "unreadable",
        reason: "a part of the state directory's path is a file, not a directory (ENOTDIR)",
      };
    if (code !== "EACCES" && code !== "EPERM")
      return { state: "unreadable", reason: `${file} cannot be looked at (${code})` };
    return { state: "unreadable", reason: permissionReason(file) };
  }
}

/** The folder (or the file) that denies this user, by the first one on the way it cannot enter or read. */
function permissionReason(file: string): string {
  let blocker = file;
  for (let d = dirname(file); d !== dirname(d); d = dirname(d)) {
    try {
      accessSync(d, constants.X_OK);
      break;
    } catch {
      blocker = d;
    }
  }
  let st: Stats | null = null;
  try {
    st = statSync(blocker);
  } catch {
    // its parent denies even that
  }
  const who = st ? `; it belongs to uid ${st.uid} (mode ${(st.mode & 0o777).toString(8)})` : "";
  return `permission denied on ${blocker}${who}: run this command as the user whose store it is, or have that user give it to you (chown -R)`;
}
