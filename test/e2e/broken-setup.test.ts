import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../helpers/dl.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * Every shell command of dist/dl, run as an ordinary user on a machine set up wrong in the
 * ways people's machines are: a TMPDIR it cannot write (the jail check made its folder
 * there and crashed `dl status` with a page of Bun's minified source), a HOME that is not
 * its own, a read-only cache dir, a settings file that is a folder or that it cannot read,
 * an XDG_CONFIG_HOME that is a file, a state dir that is a file. Each command answers with
 * lines a person reads, or one line naming what is wrong and what to run, and a documented
 * exit code; none dumps source or a stack. Runs as root (CI), as uid 65534 through setpriv.
 */
const setpriv = Bun.which("setpriv");
const isRoot = process.getuid?.() === 0;
const UID = 65534;
const DUMP = /Bun v\d|^\s+at |^\s*\d+ \| /m;

let base = "";
let dl = "";
beforeAll(() => {
  if (!isRoot || !setpriv) return;
  // /var/tmp: /tmp and the suite's root can be closed to other users.
  base = mkdtempSync("/var/tmp/dl-broken-setup-");
  chmodSync(base, 0o755);
  dl = join(base, "dl");
  copyFileSync(requireBinary(), dl);
  chmodSync(dl, 0o755);
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

/** A folder of `owner` (the test user by default) with `mode`. */
function folder(name: string, mode = 0o700, owner = UID): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  chownSync(dir, owner, owner);
  chmodSync(dir, mode);
  return dir;
}

/** A file of the test user. */
function file(path: string, text = "", mode = 0o600): string {
  writeFileSync(path, text);
  chownSync(path, UID, UID);
  chmodSync(path, mode);
  return path;
}

type Setup = { name: string; env: () => Record<string, string>; expect?: (cmd: string, r: Ran) => void };
type Ran = { code: number; stdout: string; stderr: string };

async function asUser(argv: string[], env: Record<string, string>, cwd: string): Promise<Ran> {
  const p = Bun.spawn([setpriv!, `--reuid=${UID}`, `--regid=${UID}`, "--clear-groups", "--", dl, ...argv], {
    env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", DELEGATE_LOCAL_URL: "http://127.0.0.1:9", ...env },
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

const COMMANDS = [
  ["status"],
  ["status", "--json"],
  ["status", "--watch"],
  ["jobs"],
  ["jobs", "--json"],
  ["show", "ag-0123456789"],
  ["logs", "ag-0123456789"],
  ["cancel", "ag-0123456789"],
  ["usage"],
  ["wait", "--all", "--timeout", "1"],
  ["reap", "--dry-run"],
  ["serve", "--check"],
  ["init", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--yes"],
  ["run", "helper", "hi", "--workdir", "."],
];

const home = (name: string) => folder(name);
const SETUPS: Setup[] = [
  {
    name: "a TMPDIR this user cannot write",
    env: () => ({ HOME: home("h-tmp"), TMPDIR: folder("tmp-root", 0o755, 0) }),
    expect: (cmd, r) => {
      if (cmd !== "status --json" || skipBwrap) return;
      const jail = JSON.parse(r.stdout).gemini.jail;
      // The jail check names its cause and its fix instead of crashing the command.
      expect(jail).toMatchObject({ ok: false, cause: "tmp_dir" });
      expect(jail.detail).toContain("TMPDIR");
      expect(jail.fix).toContain("TMPDIR");
    },
  },
  { name: "a HOME of another user", env: () => ({ HOME: folder("h-root", 0o700, 0), TMPDIR: folder("t1", 0o700) }) },
  {
    name: "a read-only cache dir",
    env: () => ({ HOME: home("h-cache"), TMPDIR: folder("t2"), DELEGATE_CACHE_DIR: folder("cache-ro", 0o755, 0) }),
  },
  {
    name: "a settings file that is a folder",
    env: () => {
      const h = home("h-dir");
      folder("h-dir/.config/dl/settings.env", 0o700);
      return { HOME: h, TMPDIR: folder("t3") };
    },
    expect: (_cmd, r) => {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is not a regular file, so dl reads none of it: remove it, then run dl init/);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    },
  },
  {
    name: "a settings file this user cannot read",
    env: () => {
      const h = home("h-unread");
      file(join(folder("h-unread/.config/dl"), "settings.env"), "DELEGATE_LOCAL_MODEL=m\n", 0o000);
      return { HOME: h, TMPDIR: folder("t4") };
    },
    expect: (_cmd, r) => {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /cannot be read \(EACCES, mode 0000\), so dl reads none of it: run chmod 600 .*, then dl status/,
      );
    },
  },
  {
    name: "a settings file of another user that this user cannot open",
    env: () => {
      const h = home("h-other");
      const f = join(folder("h-other/.config/dl"), "settings.env");
      writeFileSync(f, "DELEGATE_LOCAL_MODEL=m\n", { mode: 0o600 });
      chownSync(f, 0, 0);
      return { HOME: h, TMPDIR: folder("t7") };
    },
    expect: (_cmd, r) => {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        "belongs to another user (uid 0), so dl reads none of it: remove it, then run dl init",
      );
    },
  },
  {
    name: "an XDG_CONFIG_HOME and XDG_CACHE_HOME that are files",
    env: () => {
      const f = file(join(folder("x"), "a-file"));
      return { HOME: home("h-xdg"), TMPDIR: folder("t5"), XDG_CONFIG_HOME: f, XDG_CACHE_HOME: f };
    },
    expect: (cmd, r) => {
      if (!cmd.startsWith("init")) return;
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("cannot write the settings file");
      expect(r.stderr).toContain("move it away, then run dl init again");
    },
  },
  {
    name: "a state dir that is a file",
    env: () => ({ HOME: home("h-state"), TMPDIR: folder("t6"), DELEGATE_AGENT_STATE_DIR: file(join(base, "state")) }),
  },
];

describe.skipIf(!isRoot || !setpriv)("a machine set up wrong: every command answers in lines, never a dump", () => {
  for (const setup of SETUPS)
    test(setup.name, async () => {
      const env = setup.env();
      const cwd = folder(`w-${setup.name.replace(/\W+/g, "-")}`, 0o755);
      const runs = await Promise.all(COMMANDS.map(async (argv) => ({ argv, r: await asUser(argv, env, cwd) })));
      for (const { argv, r } of runs) {
        const cmd = argv.join(" ");
        const shown = `dl ${cmd} (exit ${r.code}):\n${r.stderr.slice(0, 600)}`;
        expect({ cmd, dump: DUMP.test(r.stdout) || DUMP.test(r.stderr) }).toEqual({ cmd, dump: false });
        expect([0, 1, 2, 3]).toContain(r.code);
        // A refusal is a line that starts with the command, not an unexplained exit.
        if (r.code === 2) expect(shown).toMatch(/\ndl( \w+)?: /);
        setup.expect?.(cmd, r);
      }
    }, 120_000);
});
