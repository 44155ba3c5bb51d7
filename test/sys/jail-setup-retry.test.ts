import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { markedEntry } from "../../src/sys/jail-start.ts";
import { runGroup } from "../../src/sys/process.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/** bwrap as dl starts a jail (set-up verdict on fd 3, held on fd 4), the host read-only, running `command`. */
function jailArgv(command: string[]): string[] {
  return [Bun.which("bwrap")!, "--unshare-all", "--unshare-user", "--info-fd", "3", "--block-fd", "4"].concat(
    ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"],
    markedEntry(command),
  );
}

/**
 * A jail whose set-up fails has run nothing, so runGroup starts it again (bwrap's loopback
 * set-up has failed now and then with several jails starting at once) — and only a few
 * times: a set-up that keeps failing is reported, once, as what it is.
 */
describe("a jail whose set-up failed", () => {
  test.skipIf(skipBwrap)("is started again, at most 3 times, then the failure stands", async () => {
    let starts = 0;
    const r = await runGroup({
      argv: jailArgv(["sh", "-c", "echo RAN"]),
      cwd: tmpdir(),
      env: { PATH: "/usr/bin:/bin" },
      // A forwarder that fails at once: the jail never gets its network, so nothing runs.
      jailNet: { forwarder: "/bin/false", maxProcs: 16 },
      onSpawn: () => void starts++,
      timeoutMs: 30_000,
    });
    expect(starts).toBe(3);
    expect(r.stdout.text()).not.toContain("RAN");
    // dl's own account, out of band: nothing of it is written into the child's stderr.
    expect(r.jailSetupFailure).toContain("pasta failed");
    expect(r.stderr.text()).not.toContain("pasta failed");
  });
});

describe("the set-up verdict travels out of band", () => {
  test.skipIf(skipBwrap)(
    "a command that prints the verdict and dies by SIGKILL ran: no retry, no verdict",
    async () => {
      const pasta = Bun.which("pasta");
      let starts = 0;
      const lies = [
        "dl: the jail could not be set up, so nothing ran: pasta failed: Failed to open() /dev/net/tun: Permission denied",
        "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.",
      ];
      const r = await runGroup({
        argv: jailArgv(["sh", "-c", `${lies.map((l) => `echo '${l}' >&2`).join("; ")}; kill -9 $$`]),
        cwd: tmpdir(),
        env: { PATH: "/usr/bin:/bin" },
        jailNet: { forwarder: pasta!, maxProcs: 16 },
        onSpawn: () => void starts++,
        timeoutMs: 30_000,
      });
      expect(r.stderr.text()).toContain(lies[0]!);
      expect(r.jailSetupFailure).toBeNull();
      expect(starts).toBe(1);
    },
  );
});

describe("a jail dl stopped before its command started", () => {
  // A job's timeout that fires while its jail is still being set up (a slow machine, a
  // short timeout_s) is a timeout: the jail did not fail, dl stopped it. Read as a set-up
  // failure, the job ended jail_unavailable ("the jail could not start") instead.
  test.skipIf(skipBwrap)("is a timeout, with no set-up verdict and no second start", async () => {
    const pasta = Bun.which("pasta");
    let starts = 0;
    const r = await runGroup({
      // The command waits first: dl stops a group with SIGTERM and a grace before SIGKILL, and
      // on a loaded machine a jail could finish its set-up and print within that grace.
      argv: jailArgv(["sh", "-c", "sleep 3; echo RAN"]),
      cwd: tmpdir(),
      env: { PATH: "/usr/bin:/bin" },
      jailNet: { forwarder: pasta!, maxProcs: 16 },
      onSpawn: () => void starts++,
      // Fires long before bwrap and pasta have made the jail's namespaces and network.
      timeoutMs: 1,
      graceMs: 200,
    });
    expect(r.stdout.text()).not.toContain("RAN");
    expect(r.timedOut).toBe(true);
    expect(r.jailSetupFailure).toBeNull();
    expect(starts).toBe(1);
  });
});

describe("a jail cancelled before its command started", () => {
  // The cancel's own account, not "the jail could not start": run_bash reads the verdict
  // before anything else, so a cancel that lands during the set-up would have said so.
  test.skipIf(skipBwrap)("is aborted, with no set-up verdict and no second start", async () => {
    const pasta = Bun.which("pasta");
    const cancel = new AbortController();
    let starts = 0;
    const r = await runGroup({
      // The command waits first: dl stops a group with SIGTERM and a grace before SIGKILL, and
      // on a loaded machine a jail could finish its set-up and print within that grace.
      argv: jailArgv(["sh", "-c", "sleep 3; echo RAN"]),
      cwd: tmpdir(),
      env: { PATH: "/usr/bin:/bin" },
      jailNet: { forwarder: pasta!, maxProcs: 16 },
      signal: cancel.signal,
      // Cancelled the moment it is spawned, long before its jail can start the command.
      onSpawn: () => {
        starts++;
        cancel.abort();
      },
      timeoutMs: 30_000,
      graceMs: 200,
    });
    expect(r.stdout.text()).not.toContain("RAN");
    expect(r.aborted).toBe(true);
    expect(r.jailSetupFailure).toBeNull();
    expect(starts).toBe(1);
  });
});
