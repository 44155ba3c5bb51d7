import { lstatSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import { isWithin } from "../sys/paths.ts";
import type { JailPolicy } from "./policy.ts";

/**
 * Compiles a JailPolicy to bubblewrap arguments (Linux). The jail starts from an empty
 * root (bwrap's own tmpfs): nothing of the host exists inside unless a mount below puts
 * it there. HOME is a fresh tmpfs with only agy's paths bound back, /tmp is private, and
 * the network namespace is the host's (agy must reach Google).
 */

export type PathKind = "dir" | "file" | "symlink" | null;

/** What the compiler needs to know about the host, injectable so tests can fake a layout. */
export interface FsView {
  kind(path: string): PathKind;
  readlink(path: string): string;
}

export const hostFs: FsView = {
  kind(path) {
    try {
      const st = lstatSync(path);
      return st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : "file";
    } catch {
      return null;
    }
  },
  readlink: (path) => readlinkSync(path),
};

interface Mount {
  path: string;
  mode: "ro" | "rw";
}

function systemMounts(policy: JailPolicy, fs: FsView): string[] {
  const out: string[] = [];
  for (const p of policy.systemRead) {
    const kind = fs.kind(p);
    if (kind === null) continue;
    // Merged-/usr systems make /bin, /lib… symlinks into /usr: recreate the link rather
    // than mounting /usr a second time under another name.
    if (kind === "symlink" && dirname(p) === "/") out.push("--symlink", fs.readlink(p), p);
    // A link elsewhere (/etc/resolv.conf → /run/…) is bound through; "-try" because its
    // target may be missing.
    else out.push(kind === "symlink" ? "--ro-bind-try" : "--ro-bind", p, p);
  }
  return out;
}

/**
 * The workdir, agy's state, extra paths and the git common dir. Sorted parents first so
 * a nested mount lands on top of its parent (a read-only tree with a writable workdir
 * inside it, or the reverse), and at equal depth read-only last so it wins.
 */
function userMounts(policy: JailPolicy, fs: FsView): string[] {
  const mounts: Mount[] = [
    ...policy.writable.map((path): Mount => ({ path, mode: "rw" })),
    ...policy.readOnly.map((path): Mount => ({ path, mode: "ro" })),
    // Git writes objects, refs, logs and the worktree's own HEAD/index under the common
    // dir, so a commit from a linked worktree needs it read-write. Only `<main>/.git` is
    // bound, not the main checkout's files; its hooks and config are put back read-only
    // below, since the host runs them after the job.
    ...(policy.gitCommonDir ? [{ path: policy.gitCommonDir, mode: "rw" as const }] : []),
  ];
  const depth = (p: string) => p.split("/").length;
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || (a.mode === b.mode ? 0 : a.mode === "rw" ? -1 : 1));
  const out: string[] = [];
  for (const m of mounts) {
    // The workdir must exist (a missing one is an error bwrap reports); optional paths
    // (agy state not created yet, extra paths) are bound only when present.
    if (m.path !== policy.workdir && fs.kind(m.path) === null) continue;
    out.push(m.mode === "rw" ? "--bind" : "--ro-bind", m.path, m.path);
  }
  return out;
}

/** Paths that must stay hidden or read-only although a visible tree contains them. */
function overlays(policy: JailPolicy, fs: FsView): string[] {
  const visible = [...policy.systemRead, ...policy.writable, ...policy.readOnly];
  if (policy.gitCommonDir) visible.push(policy.gitCommonDir);
  const out: string[] = [];
  for (const p of policy.gitProtected) {
    if (fs.kind(p) !== null) out.push("--ro-bind", p, p);
  }
  for (const p of policy.hidden) {
    if (!visible.some((v) => isWithin(p, v))) continue; // already absent
    const kind = fs.kind(p);
    if (kind === "dir") out.push("--tmpfs", p);
    else if (kind !== null) out.push("--ro-bind", "/dev/null", p);
  }
  return out;
}

function envArgs(env: Readonly<Record<string, string>>): string[] {
  // The child sees exactly this environment; bwrap's own (inherited from us) is cleared.
  const out = ["--clearenv"];
  for (const [k, v] of Object.entries({ ...env, TMPDIR: "/tmp" })) out.push("--setenv", k, v);
  return out;
}

/**
 * bwrap's arguments up to and including `--`: append the command's argv. `env` is the
 * allowlisted environment the command gets (HOME should be policy.home).
 */
export function bwrapPrefix(policy: JailPolicy, env: Readonly<Record<string, string>>, fs: FsView = hostFs): string[] {
  return [
    "--die-with-parent",
    // No --new-session: the jail stays in the session and process group dl made for the
    // job (setsid, no controlling terminal, so TIOCSTI has no terminal to reach), and a
    // group kill reaches everything in it. With its own session, bwrap's inner process
    // outlived a SIGKILLed server (its death signal does not survive bwrap's credential
    // switch) where no group kill could find it.
    "--unshare-all",
    "--share-net",
    // Root in the container still gets nothing it could use to undo the mounts.
    "--cap-drop",
    "ALL",
    ...systemMounts(policy, fs),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    policy.home,
    ...userMounts(policy, fs),
    ...overlays(policy, fs),
    "--chdir",
    policy.workdir,
    ...envArgs(env),
    "--",
  ];
}
