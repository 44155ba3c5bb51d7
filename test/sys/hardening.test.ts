import { describe, expect, test } from "bun:test";
import { join } from "node:path";

/**
 * hardenProcess() marks the calling process non-dumpable. It runs in a child bun, not in
 * the test runner, so the runner itself stays an ordinary process. The end-to-end proof
 * (an unprivileged user cannot read `dl serve`'s environ) is in test/e2e/lifecycle.test.ts.
 */

const MODULE = join(import.meta.dir, "..", "..", "src", "sys", "hardening.ts");

function inChild(script: string) {
  const r = Bun.spawnSync([process.execPath, "-e", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, out: r.stdout.toString().trim(), err: r.stderr.toString() };
}

describe("hardenProcess", () => {
  test.skipIf(process.platform !== "linux")("returns true on Linux, and the process is no longer dumpable", () => {
    // Read the flag back through prctl(PR_GET_DUMPABLE) in the same child: 1 before, 0 after.
    const r = inChild(`
      import { dlopen, FFIType } from "bun:ffi";
      import { hardenProcess } from ${JSON.stringify(MODULE)};
      const { symbols } = dlopen("libc.so.6", { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } });
      const before = symbols.prctl(3, 0, 0, 0, 0);
      const ok = hardenProcess();
      console.log(JSON.stringify({ before, ok, after: symbols.prctl(3, 0, 0, 0, 0) }));
    `);
    expect(r.err).toBe("");
    expect(JSON.parse(r.out)).toEqual({ before: 1, ok: true, after: 0 });
  });

  test.skipIf(process.platform === "linux")("is a no-op returning false elsewhere", () => {
    const r = inChild(`import { hardenProcess } from ${JSON.stringify(MODULE)}; console.log(hardenProcess());`);
    expect(r.out).toBe("false");
  });
});
