/**
 * Shared parts of the release tests: making a small release of the host target with
 * scripts/release.ts, unpacking an archive, running install.sh with a chosen HOME and
 * PATH, and the environment of a fresh, empty HOME.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { hostTarget } from "../../build.ts";
import { tempDir } from "../helpers/dl.ts";

export const ROOT = resolve(import.meta.dir, "..", "..");
const INSTALL_SH = join(ROOT, "install.sh");
export const HOST = hostTarget();
/** What a machine with only the base system has: sh, tar, awk, sha256sum, mktemp … */
export const SYSTEM_PATH = "/usr/bin:/bin";

export type Ran = { code: number; stdout: string; stderr: string };

export async function run(cmd: string[], env: Record<string, string>, cwd = ROOT): Promise<Ran> {
  const p = Bun.spawn(cmd, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

/**
 * A fresh HOME and the environment of someone who has nothing of dl yet: no XDG
 * variables, no state dirs, no DELEGATE_* settings — only the suite's isolation guard,
 * whose root holds this HOME.
 */
export function freshHome(prefix: string): { home: string; env: Record<string, string> } {
  const home = tempDir(prefix);
  const tmp = tempDir(`${prefix}-tmp`);
  const env: Record<string, string> = { HOME: home, PATH: SYSTEM_PATH, TMPDIR: tmp, LANG: "C" };
  for (const k of ["DELEGATE_TEST_ISOLATION", "DELEGATE_TEST_ISOLATION_ROOT"]) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return { home, env };
}

/** install.sh run by sh, as a user would run it. */
export function install(args: string[], env: Record<string, string>): Promise<Ran> {
  return run(["sh", INSTALL_SH, ...args], env);
}

/**
 * A release of the host target only, made by scripts/release.ts into a temporary folder;
 * without its npm tarballs unless `o.npm`.
 */
export async function hostRelease(
  version?: string,
  o: { npm?: boolean } = {},
): Promise<{ dir: string; archive: string }> {
  const dir = tempDir("release");
  const args = ["--only", HOST, "--out", dir, "--quick", ...(version ? ["--as-version", version] : [])];
  if (!o.npm) args.push("--skip-npm");
  const r = await run([process.execPath, join(ROOT, "scripts", "release.ts"), ...args], {
    PATH: process.env.PATH ?? SYSTEM_PATH,
  });
  if (r.code !== 0) throw new Error(`scripts/release.ts failed:\n${r.stderr}`);
  const archive = readdirSync(dir).find((f) => f.endsWith(`-${HOST}.tar.gz`));
  if (!archive) throw new Error(`no ${HOST} archive in ${dir}: ${readdirSync(dir).join(", ")}`);
  return { dir, archive };
}

/** Unpack `archive` into a new folder; returns the path of the dl inside it. */
export async function unpack(archive: string): Promise<string> {
  const into = tempDir("unpacked");
  const r = await run(["tar", "-xzf", archive, "-C", into], { PATH: SYSTEM_PATH });
  if (r.code !== 0) throw new Error(`tar -xzf ${archive}: ${r.stderr}`);
  const [folder] = readdirSync(into);
  return join(into, folder ?? "", "dl");
}

/**
 * A release of the host target whose dl is a two-line shell script that answers
 * `--version` (install.sh runs only that): for the tests of install.sh's own choices
 * (its checksum refusal, the delegate-wait link), which copy, hash and unpack a 110 MB
 * binary for nothing with a real release. What a real release installs is tested with
 * one (hostRelease).
 */
export async function standInRelease(version = "0.0.0-standin"): Promise<{ dir: string; archive: string }> {
  const dir = tempDir("standin-release");
  const name = `dl-${version}-${HOST}`;
  const folder = join(tempDir("standin-tree"), name);
  mkdirSync(folder);
  writeFileSync(join(folder, "dl"), `#!/bin/sh\necho "dl ${version} (stand-in, ${HOST})"\n`, { mode: 0o755 });
  const archive = `${name}.tar.gz`;
  const tar = await run(["tar", "-czf", join(dir, archive), "-C", dirname(folder), name], { PATH: SYSTEM_PATH });
  if (tar.code !== 0) throw new Error(`tar -czf ${archive}: ${tar.stderr}`);
  const sum = new Bun.CryptoHasher("sha256").update(readFileSync(join(dir, archive))).digest("hex");
  writeFileSync(join(dir, "SHA256SUMS"), `${sum}  ${archive}\n`);
  return { dir, archive };
}
