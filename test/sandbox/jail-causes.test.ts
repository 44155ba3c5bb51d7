import { describe, expect, test } from "bun:test";
import { jailFailure, jailFailureMessage } from "../../src/sandbox/jail-causes.ts";

/**
 * Each way a jail fails to start names its own fix: the words are dl's own account of the
 * set-up (pasta, the process limit) or bwrap's, as each really prints them.
 */
describe("jail set-up failures: the cause and its fix", () => {
  const cases: [string, string, RegExp][] = [
    ["pasta failed: Failed to open() /dev/net/tun: Permission denied", "tun_device", /chmod 0666 \/dev\/net\/tun/],
    [
      "pasta failed: Failed to open() /dev/net/tun: No such file or directory",
      "tun_device",
      /--device \/dev\/net\/tun/,
    ],
    [
      "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.",
      "user_namespaces",
      /kernel\.unprivileged_userns_clone=1/,
    ],
    ["bwrap: Creating new namespace failed: No space left on device", "user_namespaces", /max_user_namespaces/],
    ["bwrap: setting up uid map: Permission denied", "user_namespaces", /apparmor_restrict_unprivileged_userns/],
    ["no pids cgroup to cap the jail's processes", "no_pids_cgroup", /pids controller/],
    ["setpriv (util-linux) not found in /usr/bin:/bin", "no_util_linux", /util-linux/],
    ["pasta failed: Couldn't switch to pasta namespaces", "other", /bwrap --unshare-all/],
    // What Debian's pasta really prints for a device it cannot open, with dl's own look at the device added.
    [
      "bwrap is installed but cannot start a jail: pasta failed: Failed to open tun socket in namespace (/dev/net/tun: this user cannot open it (EACCES, mode 0600))",
      "tun_device",
      /chmod 0666 \/dev\/net\/tun/,
    ],
    [
      "bwrap is installed but cannot start a jail: pasta failed: Failed to open tun socket in namespace (/dev/net/tun: no such file or device (ENOENT))",
      "tun_device",
      /modprobe tun/,
    ],
    ["bwrap is installed but cannot start a jail: pasta failed: Permission denied", "other", /bwrap --unshare-all/],
    ["bwrap: Can't mount proc on /newroot/proc: Device or resource busy", "other", /bwrap --unshare-all/],
  ];
  for (const [detail, cause, fix] of cases) {
    test(`${cause}: ${detail.slice(0, 60)}`, () => {
      const f = jailFailure(detail);
      expect(f.cause).toBe(cause as typeof f.cause);
      expect(f.fix).toMatch(fix);
    });
  }

  test("the /dev/net/tun mode is never answered with the user-namespace sysctl", () => {
    expect(jailFailure("pasta failed: Failed to open() /dev/net/tun: Permission denied").fix).not.toContain("sysctl");
  });

  test("the message says nothing ran, why, and the fix", () => {
    const m = jailFailureMessage("bwrap: setting up uid map: Permission denied", "the job");
    expect(m.message).toStartWith("the jail could not start, so the job did not run: bwrap: setting up uid map");
    expect(m.message).toContain("; fix: enable unprivileged user namespaces");
  });
});
