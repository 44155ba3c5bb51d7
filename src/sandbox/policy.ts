import { isAbsolute, join, normalize } from "node:path";
import { DlError } from "../errors.ts";
import { isWithin } from "../sys/paths.ts";
import type { ProtectedPath } from "./stand-ins.ts";

/**
 * One description of the jail a CLI job runs in, independent of the mechanism that
 * enforces it: bwrap.ts compiles it for Linux, sandbox-exec.ts for macOS. Built only from
 * its inputs (never from the environment), so a test can build any policy it wants.
 *
 * The network is the jail's own: a namespace of its own with a user-mode forwarder for
 * outbound traffic (agy must reach Google), so nothing local of the host (abstract UNIX
 * sockets, loopback services) is reachable. Everything else is closed by default and
 * opened path by path.
 */

export type JailPlatform = "linux" | "darwin";

export interface JailPolicyInput {
  platform: JailPlatform;
  /** The user's home, canonical (realpath): the part of it not listed below is hidden. */
  home: string;
  /** The job's working directory, canonical: the one project the job may read and write. */
  workdir: string;
  /** dl's own state dirs (jobs, slots, pools): never visible, even if under a visible tree. */
  stateDirs: readonly string[];
  /** A per-run private temporary dir (macOS; Linux mounts a fresh tmpfs on /tmp instead). */
  tmpDir?: string;
  /**
   * Inside the workdir, kept read-only: every git dir and gitfile, hooks dirs and hook
   * managers' configs, the project's tool configuration (sandbox/tree-guard.ts finds them).
   */
  protectedPaths?: readonly ProtectedPath[];
  /** The workdir's own git dirs outside it (a linked worktree's common dir): visible, read-only. */
  gitDirsOutside?: readonly string[];
  /** More read-only paths, added only after measuring that the real CLI needs them. */
  extraReadPaths?: readonly string[];
  /** More writable paths (same rule). */
  extraWritePaths?: readonly string[];
  /**
   * Give agy its state under ~/.gemini (and, on macOS, the keychain). Default true; false
   * for commands that are not agy (an agent's run_bash), which see no part of HOME at all.
   */
  agyState?: boolean;
  /**
   * Linux: the job's own folder for agy's state (under dl's job folder, hidden from the
   * jail). Bound over each of agy's state dirs, so nothing one job writes there (a plan in
   * `brain/`, `implicit/` context, a conversation, a cache entry) reaches the host's agy
   * or the next job. Absent: those dirs live on the jail's throw-away HOME.
   */
  agyStateDir?: string;
}

/** A writable mount whose host side is not the path the jail sees (bwrap only). */
interface StateBind {
  readonly source: string;
  readonly target: string;
}

export interface JailPolicy {
  readonly platform: JailPlatform;
  readonly home: string;
  readonly workdir: string;
  readonly tmpDir: string | null;
  /** System trees a CLI needs, read-only; each is used only where it exists. */
  readonly systemRead: readonly string[];
  /** Read-only paths under HOME or elsewhere (agy's configuration, extra reads). */
  readonly readOnly: readonly string[];
  /** Read-write paths: the workdir, agy's state (macOS), extra writes. */
  readonly writable: readonly string[];
  /** Linux: agy's state dirs, each bound read-write from the job's own folder. */
  readonly stateBinds: readonly StateBind[];
  /**
   * Inside the workdir, read-only: what the host runs or obeys after the job (git dirs,
   * gitfiles, hooks, tool configuration). Bound read-only on Linux (mount points, so they
   * cannot be renamed or removed either); denied in the macOS profile, which also denies
   * creating any path a protect rule names (sys/protected-names.ts).
   */
  readonly protectedPaths: readonly ProtectedPath[];
  /** Never visible, even when a visible tree contains them. */
  readonly hidden: readonly string[];
  /** Only stat() allowed (macOS; on Linux absent paths cannot even be stat'ed). */
  readonly statOnly: readonly string[];
  /** Programs that must never start from inside (macOS: opening apps, scripting the desktop). */
  readonly denyExec: { readonly literal: readonly string[]; readonly subpath: readonly string[] };
  readonly network: "forwarded";
  /** Most processes the job may run at once (a fork bomb stops there, not at the host's pid limit). */
  readonly maxProcs: number;
}

/** Per job: far above what agy, git and a test run use, far below a host's pid space. */
const JAIL_MAX_PROCS = 512;

/**
 * agy's state it writes as it works (reference: measured with the real CLI). agy reads it
 * back (conversations, the plans of `brain/`, `implicit/` context, its cache), so on Linux
 * each job gets its own (see agyStateDir); macOS cannot redirect a path and writes the
 * user's own (docs/SECURITY.md says so).
 */
const AGY_WRITABLE = ["annotations", "brain", "cache", "conversations", "implicit", "log", "crashes", "presence"];

/**
 * agy's configuration: read, never written (a job must not change the MCP servers or the
 * settings the next job starts with). The reference places `builtin` and `bin` loosely
 * under ~/.gemini; both candidate places are listed, and only existing ones are bound.
 */
const AGY_READ_ONLY = [
  "config",
  "settings.json",
  "builtin",
  "bin",
  "antigravity-cli/settings.json",
  "antigravity-cli/builtin",
  "antigravity-cli/bin",
];

const LINUX_SYSTEM = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc/alternatives",
  "/etc/ca-certificates",
  "/etc/ssl",
  "/etc/pki",
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/nsswitch.conf",
  "/etc/gai.conf",
  "/etc/passwd",
  "/etc/group",
  "/etc/localtime",
  "/etc/timezone",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/gitconfig",
  "/etc/os-release",
  "/etc/mime.types",
];

/**
 * Each measured by the reference with the real agy, python3, git and curl; plus
 * /private/var/select, where macOS's /bin/sh shim looks up the shell it runs.
 */
const DARWIN_SYSTEM = [
  "/usr",
  "/bin",
  "/sbin",
  "/private/var/select",
  "/System",
  "/Library/Developer",
  "/opt/homebrew",
  "/private/etc",
  "/private/var/db/timezone",
  "/private/var/folders",
  "/dev",
];

const DARWIN_DENY_EXEC = { literal: ["/usr/bin/open", "/usr/bin/osascript"], subpath: ["/Applications"] };

/** Secrets and neighbours named explicitly, on top of "everything in HOME not listed". */
const HOME_SECRETS = [".ssh", ".codex", ".gnupg", ".aws", ".config/gcloud", ".netrc", ".docker", ".kube"];

function checkPath(what: string, p: string): string {
  // A path reaches a profile string or a bwrap argument: refuse what could change its meaning.
  if (!isAbsolute(p) || /[\x00-\x1f\x7f]/.test(p)) {
    throw new DlError("bad_input", `jail policy: ${what} must be an absolute path without control characters`);
  }
  const n = normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, "") : n;
}

export function buildJailPolicy(input: JailPolicyInput): JailPolicy {
  const home = checkPath("home", input.home);
  const workdir = checkPath("workdir", input.workdir);
  // A workdir holding HOME would bind the whole home back over the jail's empty one.
  if (isWithin(home, workdir)) {
    throw new DlError("workdir_forbidden", "jail policy: the workdir cannot be the whole home directory or hold it");
  }
  const gemini = join(home, ".gemini");
  const tmpDir = input.tmpDir ? checkPath("tmpDir", input.tmpDir) : null;
  const darwin = input.platform === "darwin";
  const agy = input.agyState !== false;
  const readOnly = [
    ...(agy ? AGY_READ_ONLY.map((p) => join(gemini, p)) : []),
    // agy's Google session lives in the login keychain (reference).
    ...(agy && darwin ? [join(home, "Library/Keychains")] : []),
    ...(input.extraReadPaths ?? []).map((p) => checkPath("extra read path", p)),
    // Git in a linked worktree needs the main checkout's `.git`: shown, never written.
    ...(input.gitDirsOutside ?? []).map((p) => checkPath("git dir", p)),
  ];
  const agyTargets = agy ? AGY_WRITABLE.map((p) => join(gemini, "antigravity-cli", p)) : [];
  const stateDir = input.agyStateDir && !darwin ? checkPath("agy state dir", input.agyStateDir) : null;
  const stateBinds = stateDir
    ? agyTargets.map((target, i) => ({ source: join(stateDir, AGY_WRITABLE[i] ?? ""), target }))
    : [];
  const writable = [
    workdir,
    // Linux never binds the user's own agy state: the job's copy, or the jail's tmpfs HOME.
    ...(darwin ? agyTargets : []),
    ...(tmpDir ? [tmpDir] : []),
    ...(input.extraWritePaths ?? []).map((p) => checkPath("extra write path", p)),
  ];
  return Object.freeze({
    platform: input.platform,
    home,
    workdir,
    tmpDir,
    systemRead: darwin ? DARWIN_SYSTEM : LINUX_SYSTEM,
    readOnly,
    writable,
    stateBinds,
    protectedPaths: (input.protectedPaths ?? []).map((p) => ({
      path: checkPath("protected path", p.path),
      kind: p.kind,
    })),
    hidden: [...HOME_SECRETS.map((p) => join(home, p)), ...input.stateDirs.map((p) => checkPath("state dir", p))],
    // `security` finds the keychain only if it may stat ~/Library (reference, measured).
    statOnly: darwin ? ["/", join(home, "Library")] : [],
    denyExec: darwin ? DARWIN_DENY_EXEC : { literal: [], subpath: [] },
    network: "forwarded",
    maxProcs: JAIL_MAX_PROCS,
  });
}
