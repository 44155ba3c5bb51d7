import { lstatSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import { JAIL_BLOCK_FD, JAIL_INFO_FD } from "../sys/jail-net.ts";
import { isWithin } from "../sys/paths.ts";
import type { JailPolicy } from "./policy.ts";

/**
 * Compiles a JailPolicy to bubblewrap arguments (Linux). The jail starts from an empty
 * root (bwrap's own tmpfs): nothing of the host exists inside unless a mount below puts
 * it there. HOME is a fresh tmpfs with only agy's paths bound back, /tmp is private, the
 * user is an unprivileged id of a user namespace, and the network namespace is the jail's
 * own: bwrap reports its pid on JAIL_INFO_FD and waits on JAIL_BLOCK_FD until dl has
 * attached the forwarder (sys/jail-net.ts), so agy reaches the internet but nothing local.
 */

/** The id the jailed process has inside its user namespace (the host's is never root there). */
const JAIL_ID = "1000";

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
  /** The host side, when it is not `path` (agy's per-job state). */
  source?: string;
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
 * The workdir, agy's state and extra paths. Sorted parents first so a nested mount lands
 * on top of its parent (a read-only tree with a writable workdir inside it, or the
 * reverse), and at equal depth read-only last so it wins.
 */
function userMounts(policy: JailPolicy, fs: FsView): string[] {
  const mounts: Mount[] = [
    ...policy.writable.map((path): Mount => ({ path, mode: "rw" })),
    ...policy.readOnly.map((path): Mount => ({ path, mode: "ro" })),
    ...policy.stateBinds.map((b): Mount => ({ path: b.target, source: b.source, mode: "rw" })),
  ];
  const depth = (p: string) => p.split("/").length;
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || (a.mode === b.mode ? 0 : a.mode === "rw" ? -1 : 1));
  const out: string[] = [];
  for (const m of mounts) {
    // The workdir must exist (a missing one is an error bwrap reports); optional paths
    // (agy state not created yet, extra paths) are bound only when present.
    const source = m.source ?? m.path;
    if (m.path !== policy.workdir && fs.kind(source) === null) continue;
    out.push(m.mode === "rw" ? "--bind" : "--ro-bind", source, m.path);
  }
  return out;
}

/**
 * What the host runs or obeys after the job, bound read-only onto itself inside the
 * writable workdir, parents first: nothing below it can be written, and as a mount point
 * it cannot be renamed, removed or replaced either. A path that vanished since the tree
 * guard listed it is bound with "-try" (bwrap would refuse to start on it otherwise).
 */
function protectedMounts(policy: JailPolicy): string[] {
  const depth = (p: string) => p.split("/").length;
  const out: string[] = [];
  for (const p of [...policy.protectedPaths].sort((a, b) => depth(a.path) - depth(b.path))) {
    out.push("--ro-bind-try", p.path, p.path);
  }
  return out;
}

/** Paths that must stay hidden or read-only although a visible tree contains them. */
function overlays(policy: JailPolicy, fs: FsView): string[] {
  const visible = [...policy.systemRead, ...policy.writable, ...policy.readOnly];
  const out = protectedMounts(policy);
  for (const p of policy.hidden) {
    if (!visible.some((v) => isWithin(p, v))) continue; // already absent
    const kind = fs.kind(p);
    if (kind === "dir") out.push("--tmpfs", p);
    else if (kind !== null) out.push("--ro-bind", "/dev/null", p);
  }
  return out;
}

/**
 * bwrap's arguments up to and including `--`: append the command's argv. The command's
 * environment is not among them: bwrap is started with exactly that environment and
 * hands it on (jailEnv), since every local user can read a process's argv
 * (/proc/<pid>/cmdline) and only its own user its environment.
 */
export function bwrapPrefix(policy: JailPolicy, fs: FsView = hostFs): string[] {
  return [
    "--die-with-parent",
    // No --new-session: the jail stays in the session and process group dl made for the
    // job (setsid, no controlling terminal, so TIOCSTI has no terminal to reach), and a
    // group kill reaches everything in it. With its own session, bwrap's inner process
    // outlived a SIGKILLed server (its death signal does not survive bwrap's credential
    // switch) where no group kill could find it.
    // Every namespace, the network's too (the forwarder is attached from outside).
    "--unshare-all",
    // A user namespace with an unprivileged id, and no more of them inside: a nested one
    // would hand the jail every capability over its own mounts.
    "--unshare-user",
    "--disable-userns",
    "--uid",
    JAIL_ID,
    "--gid",
    JAIL_ID,
    // Root in the container still gets nothing it could use to undo the mounts.
    "--cap-drop",
    "ALL",
    "--info-fd",
    String(JAIL_INFO_FD),
    "--block-fd",
    String(JAIL_BLOCK_FD),
    ...systemMounts(policy, fs),
    "--proc",
    "/proc",
    // Started by root, the jail's uid is still root's on the host, and sysctls check
    // only that (kernel.core_pattern runs a program as root outside every namespace):
    // bwrap leaves /proc/sys writable then, so it is bound read-only here.
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
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
    "--",
  ];
}

/** The environment bwrap is started with, which its command inherits: the allowlisted one (HOME should be policy.home), and the jail's own /tmp. */
export function jailEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, TMPDIR: "/tmp" };
}
