import { describe, expect, test } from "bun:test";
import { bwrapPrefix, type FsView, type PathKind } from "../../src/sandbox/bwrap.ts";
import { buildJailPolicy } from "../../src/sandbox/policy.ts";
import { sandboxExecProfile } from "../../src/sandbox/sandbox-exec.ts";

/** The policy compiled for each platform, against a made-up host layout. */

const LINUX_HOST: Record<string, PathKind> = {
  "/usr": "dir",
  "/bin": "symlink",
  "/lib64": "symlink",
  "/etc/ssl": "dir",
  "/etc/resolv.conf": "symlink",
  "/etc/passwd": "file",
  "/home/u/proj": "dir",
  "/home/u/proj/.state": "dir",
  "/home/u/.gemini/antigravity-cli/brain": "dir",
  "/var/lib/dl/jobs/j1/agy-state/brain": "dir",
  "/home/u/.gemini/settings.json": "file",
  "/home/u/main/.git": "dir",
  "/home/u/main/.git/hooks": "dir",
  "/home/u/main/.git/config": "file",
  "/home/u/ro-tree": "dir",
};
const LINKS: Record<string, string> = { "/bin": "usr/bin", "/lib64": "usr/lib64" };
const fakeFs: FsView = { kind: (p) => LINUX_HOST[p] ?? null, readlink: (p) => LINKS[p] ?? "" };

describe("bwrap", () => {
  const policy = buildJailPolicy({
    platform: "linux",
    home: "/home/u",
    workdir: "/home/u/proj/",
    stateDirs: ["/home/u/proj/.state", "/var/lib/dl"],
    agyStateDir: "/var/lib/dl/jobs/j1/agy-state",
    gitDirsOutside: ["/home/u/main/.git"],
    protectedPaths: [
      { path: "/home/u/proj/.claude", kind: "dir" },
      { path: "/home/u/proj/.git", kind: "file" },
      { path: "/home/u/proj/sub/.husky", kind: "dir" },
    ],
  });

  test("the whole argument list, in mount order", () => {
    expect(bwrapPrefix(policy, fakeFs)).toEqual([
      ...["--die-with-parent", "--unshare-all", "--unshare-user", "--disable-userns"],
      // an unprivileged id in the user namespace; bwrap waits for the forwarder (fds 3, 4)
      ...["--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "--info-fd", "3", "--block-fd", "4"],
      // system: merged-/usr links recreated, /etc pieces bound, missing ones left out
      ...["--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib64", "/lib64"],
      ...["--ro-bind", "/etc/ssl", "/etc/ssl", "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"],
      ...["--ro-bind", "/etc/passwd", "/etc/passwd"],
      ...["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"],
      ...["--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/home/u"],
      // HOME's visible parts, parents first
      ...["--bind", "/home/u/proj", "/home/u/proj"],
      ...["--ro-bind", "/home/u/.gemini/settings.json", "/home/u/.gemini/settings.json"],
      // the linked worktree's common dir: shown for git to read, never written
      ...["--ro-bind", "/home/u/main/.git", "/home/u/main/.git"],
      // agy's state: the job's own folder, never the user's ~/.gemini/antigravity-cli/brain
      ...["--bind", "/var/lib/dl/jobs/j1/agy-state/brain", "/home/u/.gemini/antigravity-cli/brain"],
      // put back read-only / hidden inside visible trees: what the host runs or obeys, parents first
      ...["--ro-bind-try", "/home/u/proj/.claude", "/home/u/proj/.claude"],
      ...["--ro-bind-try", "/home/u/proj/.git", "/home/u/proj/.git"],
      ...["--ro-bind-try", "/home/u/proj/sub/.husky", "/home/u/proj/sub/.husky"],
      ...["--tmpfs", "/home/u/proj/.state"],
      ...["--chdir", "/home/u/proj", "--"],
    ]);
  });

  test("a writable workdir inside a read-only tree is mounted after it", () => {
    const nested = buildJailPolicy({
      platform: "linux",
      home: "/home/u",
      workdir: "/home/u/ro-tree/proj",
      stateDirs: [],
      extraReadPaths: ["/home/u/ro-tree"],
    });
    const args = bwrapPrefix(nested, {
      kind: (p) => (p.startsWith("/home/u/ro-tree") ? "dir" : null),
      readlink: () => "",
    });
    const ro = args.indexOf("/home/u/ro-tree");
    const rw = args.indexOf("/home/u/ro-tree/proj");
    expect(args[ro - 1]).toBe("--ro-bind");
    expect(args[rw - 1]).toBe("--bind");
    expect(rw).toBeGreaterThan(ro);
  });

  test("a missing workdir is still bound, so bwrap refuses to start instead of running elsewhere", () => {
    const p = buildJailPolicy({ platform: "linux", home: "/h", workdir: "/h/gone", stateDirs: [] });
    const args = bwrapPrefix(p, { kind: () => null, readlink: () => "" });
    expect(args.join(" ")).toContain("--bind /h/gone /h/gone");
  });
});

describe("sandbox-exec profile", () => {
  const policy = buildJailPolicy({
    platform: "darwin",
    home: "/Users/ana",
    workdir: "/Users/ana/code/app",
    tmpDir: "/private/var/folders/x1/T/dl-run-1",
    stateDirs: ["/Users/ana/.codex-jobs"],
    gitDirsOutside: ["/Users/ana/code/main/.git"],
    protectedPaths: [
      { path: "/Users/ana/code/app/.git", kind: "file" },
      { path: "/Users/ana/code/app/.claude", kind: "dir" },
      { path: "/Users/ana/code/app/tools/scripts/fmt.sh", kind: "file" },
    ],
  });

  test("generated profile (snapshot)", () => {
    expect(sandboxExecProfile(policy)).toMatchSnapshot();
  });

  test("the rules that matter, in an order where the last match wins", () => {
    const profile = sandboxExecProfile(policy);
    const at = (s: string) => {
      const i = profile.indexOf(s);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(at('(deny file-read* file-write* (subpath "/"))')).toBeLessThan(at("(allow file-read*\n"));
    // The common dir of a linked worktree is readable, never writable.
    expect(at("(allow file-read*\n")).toBeLessThan(at('  (subpath "/Users/ana/code/main/.git")'));
    expect(profile.indexOf('(subpath "/Users/ana/code/main/.git")', at("(allow file-write*\n"))).toBe(-1);
    // What the host obeys is denied after the workdir is allowed, and so is any new `.git` or `.claude`.
    expect(at("(allow file-write*\n")).toBeLessThan(at('  (literal "/Users/ana/code/app/.git")'));
    expect(at("(allow file-write*\n")).toBeLessThan(at('  (subpath "/Users/ana/code/app/.claude")'));
    at(
      '(regex #"^/Users/ana/code/app/(.*/)?((\\.[gG][iI][tT]([mM][oO][dD][uU][lL][eE][sS])?|\\.[lL][fF][sS][cC][oO][nN][fF][iI][gG]))(/.*)?$")',
    );
    expect(at("(deny file-read* file-write*\n")).toBeLessThan(at('  (subpath "/Users/ana/.ssh")'));
    expect(at('  (literal "/usr/bin/open")')).toBeGreaterThan(at("(deny process-exec"));
    at('  (subpath "/Applications")');
    at('  (subpath "/Users/ana/Library/Keychains")');
  });

  test("a tools' configuration is protected anywhere in the project but never inside node_modules (npm install writes those)", () => {
    const profile = sandboxExecProfile(policy);
    // The SBPL regexes are ERE, which JavaScript reads the same way; SBPL's string doubles each backslash.
    const regexes = [...profile.matchAll(/\(regex #"(.*)"\)/g)].map((m) => new RegExp(m[1]!.replace(/\\\\/g, "\\")));
    const denied = (p: string) => regexes.some((r) => r.test(`/Users/ana/code/app/${p}`));
    for (const p of ["eslint.config.js", "web/src/.prettierrc.cjs", "node/x/vite.config.ts", "node_modules2/.eslintrc"])
      expect({ p, denied: denied(p) }).toEqual({ p, denied: true });
    for (const p of ["node_modules/pkg/.eslintrc.json", "a/node_modules/@s/b/rollup.config.js", "src/app.ts"])
      expect({ p, denied: denied(p) }).toEqual({ p, denied: false });
    // Git's metadata stays denied inside node_modules too.
    expect(denied("node_modules/pkg/.git/config")).toBe(true);
  });

  test("the folders above a protected path cannot be renamed away with it (mv tools tools-old)", () => {
    const profile = sandboxExecProfile(policy);
    const block = /\(deny file-write-unlink\n((?: {2}.*\n)*)\)/.exec(profile)?.[1] ?? "";
    expect(block.trimEnd().split("\n")).toEqual([
      '  (literal "/Users/ana/code/app/tools")',
      '  (literal "/Users/ana/code/app/tools/scripts")',
    ]);
    expect(profile.indexOf("(deny file-write-unlink\n")).toBeGreaterThan(profile.indexOf("(allow file-write*\n"));
  });

  test("quotes and backslashes in a path cannot break out of the string", () => {
    const odd = buildJailPolicy({
      platform: "darwin",
      home: "/Users/a",
      workdir: '/Users/a/x") (allow default',
      stateDirs: [],
    });
    const profile = sandboxExecProfile(odd);
    expect(profile).toContain('(subpath "/Users/a/x\\") (allow default")');
    expect(profile.match(/\(allow default\)/g)?.length).toBe(1);
  });
});
