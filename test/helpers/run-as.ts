import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "./dl.ts";

/**
 * Who a test runs dl as: root (CI, containers) and an ordinary user (the normal case on a
 * workstation). As root, the ordinary user is made with useradd (and removed again); run
 * as an ordinary user already, the test runs as itself. Each identity gets a folder of
 * its own under /var/tmp (the suite's root and, on some machines, /tmp are closed to
 * other users) with a HOME, a TMPDIR and a copy of dist/dl it may run.
 *
 * /dev/net/tun: pasta needs it open to the user (0666, as distributions ship it). The
 * machine's device is never changed: when root starts the user's dl, it does so in a
 * mount namespace of its own where a tun node of the wanted mode (made on a private
 * tmpfs) is bound over /dev/net/tun, so other tests running at the same time keep theirs.
 */

export interface Identity {
  /** "root", "user" (made here) or "self" (the ordinary user running the suite). */
  name: "root" | "user" | "self";
  uid: number;
  gid: number;
  /** A folder this identity owns (0755): everything the test makes for it lives here. */
  base: string;
  home: string;
  tmp: string;
  /** A dl this identity may run. */
  dl: string;
  /** argv that runs `argv` as this identity (with the given /dev/net/tun mode, as root starting a user). */
  argv(argv: readonly string[], o?: { tunMode?: number }): string[];
  /** An environment for dl as this identity: HOME, XDG dirs, TMPDIR and the test-isolation root in `base`. */
  env(extra?: Record<string, string | undefined>): Record<string, string>;
  /** Runs a command as this identity, to completion. */
  run(argv: readonly string[], o?: { cwd?: string; env?: Record<string, string> }): RunOut;
  /** Makes `path` (and everything below) this identity's. */
  own(path: string): void;
  cleanup(): void;
}

interface RunOut {
  code: number;
  stdout: string;
  stderr: string;
}

const TUN = "/dev/net/tun";
/** The programs that switch identity, found once on the suite's own PATH (a test may hand dl a PATH without them). */
const bin = (name: string) =>
  Bun.which(name, { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" }) ?? name;
export const TOOLS = { unshare: bin("unshare"), setpriv: bin("setpriv"), mount: bin("mount"), mknod: bin("mknod") };
const isRoot = process.getuid?.() === 0;
/** One useradd/userdel at a time across the suite's processes (they lock /etc/passwd and fail when busy). */
const ACCOUNTS_LOCK = "/var/tmp/dl-test-accounts.lock";

function sh(argv: readonly string[]): RunOut {
  const r = Bun.spawnSync([...argv], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** useradd or userdel (argv) under the suite's accounts lock, so two test files never collide on /etc/passwd. */
export function accountCommand(argv: readonly string[]): RunOut {
  return sh(["flock", ACCOUNTS_LOCK, ...argv]);
}

function idOf(user: string): { uid: number; gid: number } | null {
  const u = sh(["id", "-u", user]);
  const g = sh(["id", "-g", user]);
  return u.code === 0 && g.code === 0 ? { uid: Number(u.stdout), gid: Number(g.stdout) } : null;
}

/** The user, made if missing (true when this call made it). */
function ensureUser(user: string, home: string): { uid: number; gid: number; made: boolean } {
  const known = idOf(user);
  if (known) return { ...known, made: false };
  const r = accountCommand(["useradd", "--no-create-home", "-d", home, "-s", "/bin/sh", user]);
  const made = idOf(user);
  if (!made) throw new Error(`useradd ${user} failed: ${r.stderr.trim()}`);
  return { ...made, made: r.code === 0 };
}

/** tun's device number, as mknod wants it. */
function tunDevice(): { major: number; minor: number } | null {
  try {
    const rdev = statSync(TUN).rdev;
    return { major: (rdev >> 8) & 0xfff, minor: (rdev & 0xff) | ((rdev >> 12) & 0xfff00) };
  } catch {
    return null;
  }
}

/**
 * Root → user, in a mount namespace of its own: a tmpfs for a tun node of `mode`, bound
 * over /dev/net/tun, then setpriv to the user (POSIX sh, positional arguments only).
 */
const AS_USER_WITH_TUN = `set -e
dir=$1 mode=$2 major=$3 minor=$4 uid=$5 gid=$6
shift 6
if [ "$major" != none ]; then
  ${TOOLS.mount} -t tmpfs -o mode=0755,size=64k dl-tun "$dir"
  ${TOOLS.mknod} -m "$mode" "$dir/tun" c "$major" "$minor"
  ${TOOLS.mount} --bind "$dir/tun" ${TUN}
fi
exec ${TOOLS.setpriv} --reuid="$uid" --regid="$gid" --clear-groups -- "$@"`;

/** The identities a test runs as here: root and a user made for it, or (not root) itself. */
export function identityNames(): Identity["name"][] {
  return isRoot ? ["root", "user"] : ["self"];
}

/** One identity, made now (its folder, its copy of dl, and for "user" the account). `tag` names both. */
export function makeIdentity(name: Identity["name"], tag: string): Identity {
  return make(name, tag, name === "user" ? `dl-${tag}`.slice(0, 31) : null);
}

function make(name: Identity["name"], tag: string, user: string | null): Identity {
  const base = mkdtempSync(`/var/tmp/dl-${tag}-${name}-`);
  chmodSync(base, 0o755);
  const home = join(base, "home");
  const tmp = join(base, "tmp");
  const tunDir = join(base, "tun");
  for (const d of [home, tmp, tunDir]) mkdirSync(d, { mode: 0o755 });
  const dl = join(base, "dl");
  copyFileSync(requireBinary(), dl);
  chmodSync(dl, 0o755);
  const account = user ? ensureUser(user, home) : null;
  const uid = account?.uid ?? process.getuid?.() ?? 0;
  const gid = account?.gid ?? process.getgid?.() ?? 0;
  const own = (path: string) => {
    if (account) sh(["chown", "-R", `${uid}:${gid}`, path]);
  };
  own(base);
  const argv = (cmd: readonly string[], o: { tunMode?: number } = {}): string[] => {
    if (!account) return [...cmd];
    const dev = tunDevice();
    const mode = (o.tunMode ?? 0o666).toString(8);
    const devArgs = dev ? [String(dev.major), String(dev.minor)] : ["none", "0"];
    return [
      TOOLS.unshare,
      "-m",
      "--propagation",
      "private",
      "--",
      "/bin/sh",
      "-c",
      AS_USER_WITH_TUN,
      "sh",
      tunDir,
      mode,
      ...devArgs,
      String(uid),
      String(gid),
      ...cmd,
    ];
  };
  const env = (extra: Record<string, string | undefined> = {}): Record<string, string> => {
    const out: Record<string, string> = {
      PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
      LANG: "C.UTF-8",
      HOME: home,
      TMPDIR: tmp,
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_STATE_HOME: join(home, ".local/state"),
      XDG_DATA_HOME: join(home, ".local/share"),
      CODEX_HOME: join(home, ".codex"),
      DELEGATE_TEST_ISOLATION: "1",
      DELEGATE_TEST_ISOLATION_ROOT: base,
      DELEGATE_TOOLS: "all",
    };
    for (const [k, v] of Object.entries(extra))
      if (v === undefined) delete out[k];
      else out[k] = v;
    return out;
  };
  const run = (cmd: readonly string[], o: { cwd?: string; env?: Record<string, string> } = {}): RunOut => {
    const full = account
      ? [TOOLS.setpriv, `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", ...cmd]
      : [...cmd];
    const r = Bun.spawnSync(full, { cwd: o.cwd ?? base, env: o.env ?? env(), stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };
  const cleanup = () => {
    rmSync(base, { recursive: true, force: true });
    if (account?.made && user) accountCommand(["userdel", user]);
  };
  return { name, uid, gid, base, home, tmp, dl, argv, env, run, own, cleanup };
}
