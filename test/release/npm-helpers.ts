/**
 * The npm side of the release tests: a local registry (Verdaccio, test/fixture/npm-registry.cjs)
 * to publish the release's tarballs to, the environment of npm in a fresh HOME pointed at
 * it (or at nothing, for installs from tarballs), and the process facts (/proc) that show
 * what the host's child really is.
 */
import { readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Subprocess } from "bun";
import { tempDir } from "../helpers/dl.ts";
import { freshHome, ROOT, run, SYSTEM_PATH } from "./helpers.ts";

/** npm and node as this machine has them, with the base system behind them. */
function npmPath(): string {
  const npm = Bun.which("npm");
  if (!npm) throw new Error("npm is not on PATH; the npm release tests need Node.js and npm");
  return `${dirname(npm)}:${SYSTEM_PATH}`;
}

/** A port nothing listens on: an npm that tries the network fails at once instead of reaching out. */
const NO_REGISTRY = "http://127.0.0.1:9/";

/**
 * A fresh HOME whose npm talks only to `registry`: its own cache, no update check, no
 * audit. `prefix` is where `npm install -g` puts packages (bin/ and lib/node_modules/).
 */
export function npmHome(
  name: string,
  registry = NO_REGISTRY,
): { home: string; prefix: string; env: Record<string, string> } {
  const { home, env } = freshHome(name);
  const prefix = join(home, "npm-global");
  writeFileSync(join(home, ".npmrc"), `registry=${registry}\n`);
  return {
    home,
    prefix,
    env: {
      ...env,
      PATH: `${join(prefix, "bin")}:${npmPath()}`,
      npm_config_prefix: prefix,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
      npm_config_loglevel: "error",
    },
  };
}

export type Registry = { url: string; stop: () => Promise<void> };

/** Verdaccio on 127.0.0.1, storing into a new folder; resolves once it listens. */
export async function startRegistry(): Promise<Registry> {
  const proc = Bun.spawn(["node", join(ROOT, "test", "fixture", "npm-registry.cjs"), tempDir("verdaccio")], {
    env: { PATH: npmPath(), HOME: tempDir("verdaccio-home") },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const url = await firstUrl(proc);
  return {
    url,
    stop: async () => {
      proc.stdin.end();
      await proc.exited;
    },
  };
}

async function firstUrl(proc: Subprocess<"pipe", "pipe", "pipe">): Promise<string> {
  let seen = "";
  for await (const chunk of proc.stdout) {
    seen += new TextDecoder().decode(chunk);
    const url = seen.match(/^http:\/\/127\.0\.0\.1:\d+\/$/m)?.[0];
    if (url) return url;
  }
  throw new Error(`Verdaccio did not start: ${seen}${await new Response(proc.stderr).text()}`);
}

/** `npm publish` of a release tarball to `registry` (Verdaccio takes any token for an open scope). */
export async function publish(registry: string, tarball: string): Promise<void> {
  const { home, env } = npmHome("publisher", registry);
  const host = registry.replace(/^http:/, "");
  writeFileSync(join(home, ".npmrc"), `registry=${registry}\n${host}:_authToken=release-test\n`);
  const r = await run(["npm", "publish", tarball], env);
  if (r.code !== 0) throw new Error(`npm publish ${tarball} failed:\n${r.stderr}`);
}

/** The executable a live process runs (Linux). */
export const exeOf = (pid: number) => readlinkSync(`/proc/${pid}/exe`);

/** A process's program, or null when it ended meanwhile (a tree walk meets short-lived helpers). */
export function exeOfLive(pid: number): string | null {
  try {
    return exeOf(pid);
  } catch {
    return null;
  }
}

/** The pids of a process's children (Linux); none once it has ended. */
export function childrenOf(pid: number): number[] {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  } catch {
    return [];
  }
  return text ? text.split(/\s+/).map(Number) : [];
}

/** The parent pid of a live process (Linux): the field after the parenthesised name in /proc/<pid>/stat. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** binfmt_misc's rule for 64-bit little-endian aarch64 ELF executables, run by qemu-user ("F": opened now). */
const AARCH64_BINFMT =
  ":dl-test-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:" +
  "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:/usr/bin/qemu-aarch64-static:F";

/**
 * `cmd` as an arm64 Linux machine would run it, on this x86-64 one (Linux 6.7+, as root):
 * in a user and mount namespace of its own, with a binfmt_misc instance private to that
 * namespace that hands aarch64 executables to qemu-aarch64-static (the machine's own
 * binfmt_misc is not touched), arm64 glibc from libc6-arm64-cross, and a `uname` that
 * answers `-m` with aarch64 — a stand-in for an arm64 machine's uname, which cannot run
 * here; everything else is the real uname.
 */
export function asArm64(cmd: string[], env: Record<string, string>): { cmd: string[]; env: Record<string, string> } {
  const bin = tempDir("arm64-uname");
  writeFileSync(
    join(bin, "uname"),
    '#!/bin/sh\n# Stands in for the uname of an arm64 machine.\n[ "$1" = -m ] && { echo aarch64; exit 0; }\nexec /usr/bin/uname "$@"\n',
    { mode: 0o755 },
  );
  const setup =
    'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc && printf "%s" "$DL_TEST_BINFMT" > /proc/sys/fs/binfmt_misc/register && exec "$@"';
  return {
    cmd: ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", setup, "sh", ...cmd],
    env: {
      ...env,
      PATH: `${bin}:${env.PATH}`,
      QEMU_LD_PREFIX: "/usr/aarch64-linux-gnu",
      DL_TEST_BINFMT: AARCH64_BINFMT,
    },
  };
}
