import { INSTALL_PASTA } from "../sys/jail-net.ts";

/**
 * Why a jail could not start, and the fix for that cause: the job that failed closed and
 * `dl status` must name the right one (a /dev/net/tun the user cannot open is not fixed by
 * enabling user namespaces). Read from dl's own account of the set-up or from the jail's
 * own words, and only when nothing ran (sys/jail-start.ts), so no command's output is
 * ever classified here.
 */

export type JailCause =
  | "tun_device"
  | "user_namespaces"
  | "no_bwrap"
  | "no_pasta"
  | "no_pids_cgroup"
  | "no_util_linux"
  | "tmp_dir"
  | "sandbox_exec"
  | "other";

export interface JailFailure {
  cause: JailCause;
  fix: string;
}

export const INSTALL_BWRAP =
  "install bubblewrap: apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap (Fedora)";
const ENABLE_USERNS =
  "enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian), sysctl -w user.max_user_namespaces=15000 (where it is 0), or on Ubuntu 23.10+ sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile allowing bwrap); in a container, allow user namespaces (e.g. docker --security-opt seccomp=unconfined)";
const TUN_MODE =
  "let this user open /dev/net/tun, which pasta needs for the jail's network: chmod 0666 /dev/net/tun (the mode distributions ship), or run dl as root";
const TUN_MISSING =
  "create /dev/net/tun, which pasta needs for the jail's network: modprobe tun, or in a container pass the device (docker run --device /dev/net/tun)";
const PIDS_CGROUP =
  "mount cgroup2 with the pids controller enabled (/sys/fs/cgroup/cgroup.subtree_control) or the cgroup v1 pids hierarchy";
const UTIL_LINUX = "install util-linux (setpriv, prlimit): apt-get install util-linux";
const TMP_DIR =
  "set TMPDIR to a folder this user can write (export TMPDIR=$HOME/.cache/tmp after mkdir -p it), or make the one named writable";
const SEE_WHY = "run `bwrap --unshare-all --ro-bind / / true` to see why it fails";

const RULES: { test: RegExp; failure: JailFailure }[] = [
  { test: /\/dev\/net\/tun.*(no such file|ENOENT|ENODEV|ENXIO)/i, failure: { cause: "tun_device", fix: TUN_MISSING } },
  { test: /\/dev\/net\/tun/i, failure: { cause: "tun_device", fix: TUN_MODE } },
  { test: /pid file in TMPDIR/, failure: { cause: "tmp_dir", fix: TMP_DIR } },
  { test: /no pids cgroup/i, failure: { cause: "no_pids_cgroup", fix: PIDS_CGROUP } },
  { test: /\b(setpriv|prlimit)\b.*not found/i, failure: { cause: "no_util_linux", fix: UTIL_LINUX } },
  { test: /pasta\b.*not found|ENOENT.*pasta/i, failure: { cause: "no_pasta", fix: INSTALL_PASTA } },
  // pasta's own failures other than the device are not the kernel's namespaces (wherever the words sit in the detail).
  { test: /\bpasta failed/i, failure: { cause: "other", fix: SEE_WHY } },
  {
    test: /creating new namespace|uid map|gid map|unprivileged|user namespace|setting up|No space left on device|Operation not permitted|Permission denied/i,
    failure: { cause: "user_namespaces", fix: ENABLE_USERNS },
  },
];

/** The cause of a jail's failed set-up, from dl's account or bwrap's own words. */
export function jailFailure(detail: string): JailFailure {
  return RULES.find((r) => r.test.test(detail))?.failure ?? { cause: "other", fix: SEE_WHY };
}

/** What a job or a command that never started says: nothing ran, why, and the fix. */
export function jailFailureMessage(detail: string, what = "the command"): { message: string } & JailFailure {
  const f = jailFailure(detail);
  return { ...f, message: `the jail could not start, so ${what} did not run: ${detail}; fix: ${f.fix}` };
}
