import { tmpdir } from "node:os";
import { type JailProbe, probeJail } from "../../src/sandbox/probe.ts";

/**
 * Is the real jail usable here? Locally a machine without bwrap (or with user namespaces
 * off) skips the jail tests; in CI (`CI` set) they run anyway and fail, so a CI image that
 * lost bubblewrap cannot turn the suite green by skipping the tests that matter most.
 */
const IN_CI = Boolean(process.env.CI);

export const linuxProbe: JailProbe | null =
  process.platform === "linux"
    ? await probeJail({ platform: "linux", path: process.env.PATH ?? "/usr/bin:/bin", cwd: tmpdir() })
    : null;

/** Skip the real-bwrap tests: not Linux, or no usable jail outside CI. */
export const skipBwrap = process.platform !== "linux" || (!linuxProbe?.ok && !IN_CI);

/** The probe's answer, or a failing one that says why (the tests then fail with it). */
export function requireLinuxProbe(): JailProbe {
  return linuxProbe ?? { kind: "bwrap", ok: false, detail: "not Linux", fix: null, bin: null };
}
