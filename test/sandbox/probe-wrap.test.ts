import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDlError } from "../../src/errors.ts";
import { jailPlatform, probeJailOnce, wrapCommand } from "../../src/sandbox/index.ts";
import { buildJailPolicy } from "../../src/sandbox/policy.ts";
import { type JailProbe, probeJail } from "../../src/sandbox/probe.ts";
import { markedEntry } from "../../src/sys/jail-start.ts";
import { tempDir } from "../helpers/dl.ts";
import { skipBwrap } from "./jail-env.ts";

const cwd = tmpdir();

/** A directory holding one executable `bwrap` with the given body. */
function fakeBwrapDir(body: string): string {
  const dir = tempDir("fake-bwrap", process.env.HOME ?? tmpdir());
  writeFileSync(join(dir, "bwrap"), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return dir;
}

describe("probeJail", () => {
  test.skipIf(skipBwrap)("the real bwrap starts a jail here", async () => {
    const p = await probeJail({ platform: "linux", path: process.env.PATH ?? "", cwd });
    expect(p).toMatchObject({ kind: "bwrap", ok: true, fix: null });
    expect(p.bin).toStartWith("/");
  });

  test("a trial that fails now and then is tried again; one that keeps failing is reported", async () => {
    const dir = fakeBwrapDir("exit 0");
    writeFileSync(join(dir, "pasta"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const flaky = "bwrap: loopback: Failed RTM_NEWADDR: No child processes";
    const runs = (failures: number) => {
      let n = 0;
      const run = async () => {
        n++;
        const failed = n <= failures;
        return {
          exitCode: failed ? 1 : 0,
          signal: null,
          timedOut: false,
          stderr: { text: () => (failed ? flaky : "") },
        };
      };
      return { run: run as unknown as NonNullable<Parameters<typeof probeJail>[0]["run"]>, count: () => n };
    };
    const twice = runs(2);
    const ok = await probeJail({ platform: "linux", path: dir, cwd, run: twice.run });
    expect(ok).toMatchObject({ kind: "bwrap", ok: true });
    expect(twice.count()).toBe(3);
    const always = runs(99);
    const broken = await probeJail({ platform: "linux", path: dir, cwd, run: always.run });
    expect(broken).toMatchObject({ kind: "bwrap", ok: false });
    expect(broken.detail).toContain("RTM_NEWADDR");
    expect(always.count()).toBe(3);
  });

  test("a failure with a known cause (how the machine is set up) is reported at the first trial, not tried again", async () => {
    const dir = fakeBwrapDir("exit 0");
    writeFileSync(join(dir, "pasta"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    let n = 0;
    const run = (async () => {
      n++;
      const text =
        "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.";
      return { exitCode: 1, signal: null, timedOut: false, stderr: { text: () => text } };
    }) as unknown as NonNullable<Parameters<typeof probeJail>[0]["run"]>;
    const p = await probeJail({ platform: "linux", path: dir, cwd, run });
    expect(p).toMatchObject({ kind: "bwrap", ok: false, cause: "user_namespaces" });
    expect(n).toBe(1);
  });

  test("no bwrap on PATH: the fix is installing it", async () => {
    const empty = tempDir("empty-path", process.env.HOME ?? tmpdir());
    const p = await probeJail({ platform: "linux", path: empty, cwd });
    expect(p).toMatchObject({ kind: "bwrap", ok: false, bin: null, detail: "bwrap not found on PATH" });
    expect(p.fix).toContain("apt-get install bubblewrap");
  });

  test("bwrap present but user namespaces off: the fix is the sysctl", async () => {
    const dir = fakeBwrapDir(
      `echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1`,
    );
    const p = await probeJail({ platform: "linux", path: `${dir}:/usr/bin:/bin`, cwd });
    expect(p).toMatchObject({ kind: "bwrap", ok: false, bin: join(dir, "bwrap") });
    expect(p.detail).toContain("No permissions to creating new namespace");
    expect(p.cause).toBe("user_namespaces");
    expect(p.fix).toContain("sysctl -w kernel.unprivileged_userns_clone=1");
  });

  test("bwrap failing for another reason: the fix says how to see why", async () => {
    const dir = fakeBwrapDir("exit 3");
    const p = await probeJail({ platform: "linux", path: `${dir}:/usr/bin:/bin`, cwd });
    expect(p).toMatchObject({
      ok: false,
      cause: "other",
      detail: "bwrap is installed but cannot start a jail: the jail ended (exit 3) before its command started",
    });
    expect(p.fix).toContain("bwrap --unshare-all");
  });

  test.skipIf(process.platform === "darwin")("sandbox-exec missing (not macOS)", async () => {
    const p = await probeJail({ platform: "darwin", path: "/usr/bin:/bin", cwd });
    expect(p).toMatchObject({ kind: "sandbox-exec", ok: false });
    expect(p.fix).toContain("/usr/bin/sandbox-exec");
  });

  test.skipIf(process.platform !== "darwin")("sandbox-exec works (macOS)", async () => {
    const p = await probeJail({ platform: "darwin", path: "/usr/bin:/bin", cwd });
    expect(p).toMatchObject({ kind: "sandbox-exec", ok: true, bin: "/usr/bin/sandbox-exec" });
  });

  test.skipIf(skipBwrap)("probeJailOnce remembers a working jail, asks again after a failure", async () => {
    const path = process.env.PATH ?? "";
    const first = await probeJailOnce({ platform: "linux", path, cwd });
    expect(first.ok).toBe(true);
    expect(await probeJailOnce({ platform: "linux", path, cwd })).toBe(first);
    const empty = tempDir("empty-path", process.env.HOME ?? tmpdir());
    const missing = await probeJailOnce({ platform: "linux", path: empty, cwd });
    expect(missing.ok).toBe(false);
    expect(await probeJailOnce({ platform: "linux", path: empty, cwd })).not.toBe(missing);
  });

  test("jailPlatform: a jail exists for Linux and macOS only", () => {
    expect(jailPlatform("linux")).toBe("linux");
    expect(jailPlatform("darwin")).toBe("darwin");
    expect(jailPlatform("win32")).toBeNull();
  });

  test("no jail on other platforms", async () => {
    const p = await probeJail({ platform: "win32", path: "", cwd });
    expect(p).toMatchObject({ kind: "none", ok: false });
  });
});

describe("wrapCommand", () => {
  const linux = buildJailPolicy({ platform: "linux", home: "/h", workdir: "/h/w", stateDirs: [] });
  const darwin = buildJailPolicy({
    platform: "darwin",
    home: "/Users/a",
    workdir: "/Users/a/w",
    tmpDir: "/private/var/folders/t",
    stateDirs: [],
  });
  const okBwrap: JailProbe = {
    kind: "bwrap",
    ok: true,
    detail: "",
    fix: null,
    bin: "/usr/bin/bwrap",
    forwarder: "/usr/bin/pasta",
  };
  const okSbx: JailProbe = { kind: "sandbox-exec", ok: true, detail: "", fix: null, bin: "/usr/bin/sandbox-exec" };
  const noFs = { kind: () => null, readlink: () => "" };

  test("fails closed when the jail cannot start, naming the fix", () => {
    const broken: JailProbe = {
      kind: "bwrap",
      ok: false,
      detail: "bwrap not found on PATH",
      fix: "apt-get install bubblewrap",
      bin: null,
    };
    let err: unknown;
    try {
      wrapCommand(linux, ["agy"], {}, broken);
    } catch (e) {
      err = e;
    }
    expect(isDlError(err, "jail_unavailable")).toBe(true);
    expect((err as Error).message).toBe(
      "the jail cannot start, so nothing runs: bwrap not found on PATH; fix: apt-get install bubblewrap",
    );
  });

  test("refuses a probe for the other platform's jail", () => {
    expect(() => wrapCommand(linux, ["agy"], {}, okSbx)).toThrow(/jail cannot start/);
    expect(() => wrapCommand(darwin, ["agy"], {}, okBwrap)).toThrow(/jail cannot start/);
  });

  test("Linux: bwrap, its arguments, then the command; the command's environment is bwrap's, never in its argv", () => {
    const w = wrapCommand(
      linux,
      ["agy", "-p", "x"],
      { PATH: "/usr/bin", HTTPS_PROXY: "http://u:pw-8812@p" },
      okBwrap,
      noFs,
    );
    expect(w.kind).toBe("bwrap");
    expect(w.argv[0]).toBe("/usr/bin/bwrap");
    // The command behind the start marker (sys/jail-start.ts): dl learns out of band that it ran.
    expect(w.argv.slice(-8)).toEqual(["--", ...markedEntry(["agy", "-p", "x"])]);
    expect(w.argv.slice(-3)).toEqual(["agy", "-p", "x"]);
    expect(w.jailMarked).toBe(true);
    // argv is readable by every local user (/proc/<pid>/cmdline); the environment only by its own.
    expect(w.env).toEqual({ PATH: "/usr/bin", HTTPS_PROXY: "http://u:pw-8812@p", TMPDIR: "/tmp" });
    expect(w.argv.join(" ")).not.toContain("pw-8812");
    expect(w.argv).not.toContain("--setenv");
    expect(w.jailNet).toEqual({ forwarder: "/usr/bin/pasta", maxProcs: 512 });
  });

  test("Linux without the network forwarder: fails closed with the install line", () => {
    const noPasta = { ...okBwrap, forwarder: null };
    expect(() => wrapCommand(linux, ["agy"], {}, noPasta, noFs)).toThrow(/apt-get install passt/);
  });

  test("macOS: sandbox-exec -p <profile>, the command, temporaries in the run's dir", () => {
    const w = wrapCommand(darwin, ["agy", "-p", "x"], { PATH: "/usr/bin", TMPDIR: "/elsewhere" }, okSbx);
    expect(w.argv[0]).toBe("/usr/bin/sandbox-exec");
    expect(w.argv[1]).toBe("-p");
    expect(w.argv[2]).toStartWith("(version 1)");
    expect(w.argv.slice(3)).toEqual(markedEntry(["agy", "-p", "x"]));
    expect(w.env).toEqual({ PATH: "/usr/bin", TMPDIR: "/private/var/folders/t" });
  });
});

describe("buildJailPolicy", () => {
  test("refuses relative paths, control characters, and / or HOME as workdir", () => {
    const base = { platform: "linux" as const, home: "/h", workdir: "/h/w", stateDirs: [] };
    expect(() => buildJailPolicy({ ...base, workdir: "w" })).toThrow(/absolute/);
    expect(() => buildJailPolicy({ ...base, workdir: "/h/w\n(allow default)" })).toThrow(/control/);
    expect(() => buildJailPolicy({ ...base, stateDirs: ["rel"] })).toThrow(/state dir/);
    expect(() => buildJailPolicy({ ...base, workdir: "/h/" })).toThrow(/whole home/);
    expect(() => buildJailPolicy({ ...base, workdir: "/" })).toThrow(/whole home/);
    expect(() => buildJailPolicy({ ...base, home: "/h/u", workdir: "/h" })).toThrow(/hold it/);
  });

  test("dl's state dirs and HOME's secrets are hidden; agy's state split writable / read-only", () => {
    const p = buildJailPolicy({ platform: "linux", home: "/h", workdir: "/h/w/", stateDirs: ["/h/.codex-jobs/"] });
    expect(p.workdir).toBe("/h/w");
    expect(p.hidden).toContain("/h/.codex-jobs");
    expect(p.hidden).toContain("/h/.ssh");
    // Linux: agy's state is never the user's own; the job's folder, when given.
    expect(p.writable.filter((w) => w.startsWith("/h/.gemini"))).toEqual([]);
    const job = buildJailPolicy({
      platform: "linux",
      home: "/h",
      workdir: "/h/w",
      stateDirs: [],
      agyStateDir: "/s/j/agy",
    });
    expect(job.stateBinds).toContainEqual({
      source: "/s/j/agy/conversations",
      target: "/h/.gemini/antigravity-cli/conversations",
    });
    const mac = buildJailPolicy({
      platform: "darwin",
      home: "/h",
      workdir: "/h/w",
      stateDirs: [],
      agyStateDir: "/s/j/agy",
    });
    expect(mac.writable).toContain("/h/.gemini/antigravity-cli/conversations");
    expect(p.readOnly).toContain("/h/.gemini/config");
    expect(p.readOnly).not.toContain("/h/.gemini");
    expect(p.denyExec).toEqual({ literal: [], subpath: [] });
    expect(p.network).toBe("forwarded");
  });
});
