import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, statSync } from "node:fs";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * The jail as an ordinary user (the normal case on a workstation): 20 jails one at a time
 * and 20 at once must all start. Run as root (CI), the test makes a user with useradd and
 * gives /dev/net/tun the mode distributions ship (0666) for the run, restoring it after.
 * Before pasta joined the user namespace that owns the jail's network namespace, 0 to 2
 * of 20 started together here ("Couldn't switch to pasta namespaces").
 */

const USER = "dl-jail-user";
const ROOT = process.getuid?.() === 0;
const TUN = "/dev/net/tun";
let tunMode: number | null = null;
let home = "";

function sh(...argv: string[]) {
  return Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
}

beforeAll(() => {
  if (!ROOT || skipBwrap) return;
  if (sh("id", USER).exitCode !== 0) expect(sh("useradd", "-m", USER).exitCode).toBe(0);
  home = sh("sh", "-c", `getent passwd ${USER} | cut -d: -f6`).stdout.toString().trim();
  mkdirSync(`${home}/tmp`, { recursive: true });
  const uid = Number(sh("id", "-u", USER).stdout.toString());
  chownSync(`${home}/tmp`, uid, uid);
  tunMode = statSync(TUN).mode & 0o7777;
  chmodSync(TUN, 0o666);
});

afterAll(() => {
  if (tunMode !== null) chmodSync(TUN, tunMode);
});

test.skipIf(!ROOT || skipBwrap)("as an ordinary user: 20 jails one at a time and 20 at once all start", () => {
  const script = new URL("../fixture/jail-starts.ts", import.meta.url).pathname;
  const r = Bun.spawnSync(
    [
      "runuser",
      "-u",
      USER,
      "--",
      "env",
      `HOME=${home}`,
      `TMPDIR=${home}/tmp`,
      "PATH=/usr/bin:/bin",
      process.execPath,
      script,
      "20",
    ],
    { cwd: home, stdout: "pipe", stderr: "pipe", timeout: 240_000 },
  );
  const line = r.stdout.toString().trim().split("\n").pop() ?? "";
  console.log(`jail starts as an ordinary user: ${line}`);
  const figures = JSON.parse(line || "{}") as { sequential?: number; together?: number; failures?: string[] };
  expect(figures.failures ?? [r.stderr.toString().slice(0, 500)]).toEqual([]);
  expect(figures.sequential).toBe(20);
  expect(figures.together).toBe(20);
});
