import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { DlError } from "../errors.ts";

/**
 * As root on Linux, a child dl does not jail (run_bash without the sandbox, the Codex
 * CLI, the dsh launcher) runs in a pid namespace of its own with a /proc of its own. Root
 * is never stopped by dl's non-dumpable flag, so without this the child could read every
 * key in `/proc/<dl's pid>/environ`, and its parent's and every other process's. bwrap
 * (as root, no user namespace: the child keeps root's file access) mounts each entry of
 * the host's `/` except `/proc` on a fresh root, then a new procfs: unmounting that /proc
 * reveals nothing beneath it, and a procfs mounted again shows the child's namespace only.
 * The capabilities that read other processes' memory by other routes (ptrace, raw
 * memory, BPF and perf, modules, kexec) are dropped. The child stays in the process
 * group and session dl made (no --new-session), so group kills and the reaper's identity
 * check (pid, start time, group and session leader: bwrap) work as for the jail; when
 * bwrap's init ends, the kernel ends every process of the namespace. Ordinary users keep
 * the non-dumpable protection (sys/hardening.ts), which holds against them.
 */

/** Where bwrap is looked up: never the job's PATH. */
const SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
const DROPPED = ["CAP_SYS_PTRACE", "CAP_SYS_RAWIO", "CAP_BPF", "CAP_PERFMON", "CAP_SYS_MODULE", "CAP_SYS_BOOT"];

const NEEDS_BWRAP_AS_ROOT =
  "as root, dl runs the programs it does not jail in a pid namespace of their own through bubblewrap, so they cannot read dl's keys from /proc: install bubblewrap (apt-get install bubblewrap), or run dl as a user other than root";

/** Every entry of the host's `/` but `/proc`, bound onto the new root as it is. */
function hostRoot(): string[] {
  const out: string[] = [];
  for (const name of readdirSync("/").sort()) {
    if (name === "proc") continue;
    const path = join("/", name);
    try {
      if (lstatSync(path).isSymbolicLink()) out.push("--symlink", readlinkSync(path), path);
      else out.push("--dev-bind", path, path);
    } catch {
      // gone since the listing
    }
  }
  return out;
}

function rootOnLinux(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0;
}

/**
 * argv as it runs in its own pid namespace, when dl is root on Linux; unchanged
 * otherwise. Throws jail_unavailable (nothing runs) as root without bwrap.
 */
export function inOwnPidNamespace(argv: readonly string[], cwd: string): string[] {
  if (!rootOnLinux()) return [...argv];
  const bwrap = Bun.which("bwrap", { PATH: SYSTEM_PATH });
  if (!bwrap) throw new DlError("jail_unavailable", NEEDS_BWRAP_AS_ROOT, { failure_kind: "jail_unavailable" });
  return [
    bwrap,
    "--unshare-pid",
    ...hostRoot(),
    "--proc",
    "/proc",
    ...DROPPED.flatMap((c) => ["--cap-drop", c]),
    "--chdir",
    cwd,
    "--",
    ...argv,
  ];
}
