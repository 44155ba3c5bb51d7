import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { runGroup } from "../../src/sys/process.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * A jail whose set-up fails has run nothing, so runGroup starts it again (bwrap's loopback
 * set-up has failed now and then with several jails starting at once) — and only a few
 * times: a set-up that keeps failing is reported, once, as what it is.
 */
describe("a jail whose set-up failed", () => {
  test.skipIf(skipBwrap)("is started again, at most 3 times, then the failure stands", async () => {
    const bwrap = Bun.which("bwrap");
    let starts = 0;
    const r = await runGroup({
      argv: [bwrap!, "--unshare-all", "--unshare-user", "--info-fd", "3", "--block-fd", "4"].concat([
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "sh",
        "-c",
        "echo RAN",
      ]),
      cwd: tmpdir(),
      env: { PATH: "/usr/bin:/bin" },
      // A forwarder that fails at once: the jail never gets its network, so nothing runs.
      jailNet: { forwarder: "/bin/false", maxProcs: 16 },
      onSpawn: () => void starts++,
      timeoutMs: 30_000,
    });
    expect(starts).toBe(3);
    expect(r.stdout.text()).not.toContain("RAN");
    expect(r.stderr.text()).toContain("the jail could not be set up, so nothing ran");
  });
});
